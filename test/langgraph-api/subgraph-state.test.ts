import { describe, expect, it } from 'vitest';
import { sdkFailure } from '../support/langgraph-sdk.js';
import { BACKENDS, collect, useLangGraphApi } from './runs-support.js';

/*
 * A run paused inside a subgraph (lg-routed: its `forecast` subgraph stops before `report`), as
 * LangGraph's server shows and edits it: the parent's task names the subgraph's checkpoint by its
 * namespace only ({thread_id, checkpoint_ns}); that reference reads the subgraph's state and
 * history and edits it (through the subgraph's reducers), and the run that goes on sees the edit.
 */

const ask = { messages: [{ role: 'human', content: 'weather?', id: 'ask' }] };

describe.each(BACKENDS)('a run paused inside a subgraph (%s)', (backend) => {
  const api = useLangGraphApi(backend);

  it("the parent's task names the subgraph's checkpoint by namespace; subgraphs=true shows its state", async () => {
    const thread = (await api.client.threads.create()).thread_id;
    const parts = await collect(api.client.runs.stream(thread, 'lg-routed', { input: ask }));
    expect(parts.filter((p) => p.event === 'error')).toEqual([]);
    expect(parts.at(-1)).toMatchObject({ event: 'values', data: { __interrupt__: [] } });
    const state = await api.client.threads.getState(thread);
    expect(state.next).toEqual(['forecast']);
    expect(state.tasks).toEqual([
      {
        id: expect.any(String),
        name: 'forecast',
        path: ['__pregel_pull', 'forecast'],
        error: null,
        interrupts: [],
        checkpoint: { thread_id: thread, checkpoint_ns: expect.stringMatching(/^forecast:/) },
        state: null,
        result: null,
      },
    ]);
    const deep = await api.client.threads.getState(thread, undefined, { subgraphs: true });
    expect(deep.tasks[0]!.checkpoint).toBeNull();
    expect(deep.tasks[0]!.state).toMatchObject({ values: { city: 'Lisbon' }, next: ['report'] });
    expect((await api.client.threads.get(thread)).status).toBe('interrupted');
  });

  it("the subgraph's checkpoint reads and edits its state; the run going on sees the edit", async () => {
    const thread = (await api.client.threads.create()).thread_id;
    await collect(api.client.runs.stream(thread, 'lg-routed', { input: ask }));
    const inner = (await api.client.threads.getState(thread)).tasks[0]!.checkpoint!;

    await api.client.threads.updateState(thread, { values: { city: 'Porto' }, checkpoint: inner });
    const edited = await api.client.threads.getState<{ city: string }>(thread, inner);
    expect(edited.values.city).toBe('Porto');
    expect(edited.next).toEqual(['report']);
    expect(edited.tasks.map((t) => t.name)).toEqual(['report']);
    // The root graph's state is untouched by the subgraph's edit.
    expect((await api.client.threads.getState(thread)).next).toEqual(['forecast']);

    const parts = await collect(api.client.runs.stream(thread, 'lg-routed', { input: null }));
    expect(parts.filter((p) => p.event === 'error')).toEqual([]);
    const last = parts.findLast((p) => p.event === 'values')!.data;
    expect(last.messages.map((m: { content: string }) => m.content)).toEqual(['weather?', 'Sunny in Porto']);

    const history = await api.client.threads.getHistory(thread);
    expect(history[0]!.next).toEqual([]);
    expect(history.at(-1)!.next).toEqual(['__start__']);
    const innerHistory = await api.client.threads.getHistory<{ city: string }>(thread, { checkpoint: inner });
    expect(innerHistory[0]!.next).toEqual([]);
    expect(innerHistory[0]!.values.city).toBe('Porto');
    expect(innerHistory.at(-1)!.next).toEqual(['__start__']);
    expect(innerHistory.every((s) => s.checkpoint!.checkpoint_ns === inner.checkpoint_ns)).toBe(true);
  });

  it('a namespace the thread has no subgraph under is 404; one too long is 400', async () => {
    const thread = (await api.client.threads.create()).thread_id;
    await collect(api.client.runs.stream(thread, 'lg-routed', { input: ask }));
    const unknown = { thread_id: thread, checkpoint_ns: 'nowhere:1', checkpoint_id: null, checkpoint_map: null };
    expect((await sdkFailure(api.client.threads.updateState(thread, { values: { city: 'X' }, checkpoint: unknown }))).status).toBe(404);
    expect((await sdkFailure(api.client.threads.getState(thread, unknown))).status).toBe(404);
    const long = await sdkFailure(api.client.threads.getState(thread, { thread_id: thread, checkpoint_ns: 'x'.repeat(1001), checkpoint_id: null, checkpoint_map: null }));
    expect(long.status).toBe(400);
    expect(long.body.error.code).toBe('bad_request');
  });
});
