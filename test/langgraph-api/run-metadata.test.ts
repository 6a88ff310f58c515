import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BACKENDS, useLangGraphApi } from './runs-support.js';

/*
 * A run's metadata reaches the metadata of the checkpoints it writes, as on LangGraph's server:
 * the client's `metadata` and `config.metadata`, and the graph and assistant of the run (its
 * `configurable`), so `threads.getHistory({ metadata })` finds one run's checkpoints.
 */

describe.each(BACKENDS)('LangGraph run metadata in checkpoint metadata (%s)', (backend) => {
  const api = useLangGraphApi(backend);

  it("finds a run's checkpoints by its metadata, and each names the run's graph and assistant", async () => {
    const thread = randomUUID();
    await api.client.runs.wait(thread, 'lg-two', { input: { word: 'a' }, ifNotExists: 'create', metadata: { experiment: 'first' } });
    // The SDK's Config type has no metadata; a client may send it all the same.
    const secondRun = await api.post(`/threads/${thread}/runs/wait`, { assistant_id: 'lg-two', input: { word: 'b' }, config: { metadata: { experiment: 'second' } } });
    expect(secondRun.status).toBe(200);

    const first = await api.client.threads.getHistory(thread, { metadata: { experiment: 'first' } });
    const second = await api.client.threads.getHistory(thread, { metadata: { experiment: 'second' } });
    expect(first.length).toBeGreaterThan(0);
    expect(second.length).toBeGreaterThan(0);
    const runOf = (states: typeof first) => new Set(states.map((state) => state.metadata?.run_id));
    expect(runOf(first).size).toBe(1);
    expect(runOf(second).size).toBe(1);
    expect([...runOf(first)][0]).not.toBe([...runOf(second)][0]);
    for (const state of [...first, ...second]) {
      expect(state.metadata).toMatchObject({ graph_id: 'lg-two', thread_id: thread });
      expect(state.metadata?.assistant_id).toEqual(expect.any(String));
    }
    // Nothing matches metadata no run had.
    expect(await api.client.threads.getHistory(thread, { metadata: { experiment: 'none' } })).toEqual([]);
  });
});

describe.each(BACKENDS)('a function-export graph built from its thread’s configuration (%s)', (backend) => {
  const api = useLangGraphApi(backend);

  it('updates the state of a thread as its last run built the graph: the assistant’s configurable names the node', async () => {
    const assistant = await api.client.assistants.create({ graphId: 'lg-named', config: { configurable: { node: 'custom' } } });
    const thread = await api.client.threads.create({ graphId: 'lg-named' });
    expect(await api.client.runs.wait(thread.thread_id, assistant.assistant_id, { input: {} })).toEqual({ steps: ['custom'] });
    // The node exists only in the graph built with the assistant's configurable.
    await api.client.threads.updateState(thread.thread_id, { values: { steps: ['edited'] }, asNode: 'custom' });
    expect((await api.client.threads.getState(thread.thread_id)).values).toEqual({ steps: ['custom', 'edited'] });
  });
});
