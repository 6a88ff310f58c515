import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sdkFailure } from '../support/langgraph-sdk.js';
import { BACKENDS, collect, useLangGraphApi } from './runs-support.js';

/*
 * A thread created with its history (`supersteps` of POST /threads, LangGraph's bulkUpdateState):
 * replaying a run's updates as supersteps gives a thread whose history reads as the run's.
 */

describe.each(BACKENDS)('LangGraph threads created with supersteps (%s)', (backend) => {
  const api = useLangGraphApi(backend);

  it("replays a run's updates into a new thread with the same history, and refuses what cannot be replayed", async () => {
    const thread = randomUUID();
    const parts = await collect(api.client.runs.stream(thread, 'lg-two', { input: { word: 'x' }, ifNotExists: 'create', streamMode: 'updates' }));
    const history = await api.client.threads.getHistory(thread);
    const input = history.at(-2)!.values;
    const clone = await api.client.threads.create({
      graphId: 'lg-two',
      supersteps: [
        { updates: [{ asNode: '__input__', values: input }] },
        { updates: [{ asNode: '__start__', values: input }] },
        ...parts.filter((p) => p.event === 'updates').map(({ data }) => ({ updates: Object.entries(data as object).map(([asNode, values]) => ({ asNode, values })) })),
      ],
    });
    const cloned = await api.client.threads.getHistory(clone.thread_id);
    const shape = (states: typeof history) => states.map(({ next, values }) => ({ next, values }));
    expect(shape(cloned)).toEqual(shape(history));
    expect((await api.get(`/api/sessions/state?session_id=${clone.thread_id}`)).body.state).toEqual({ steps: ['first', 'second'], word: 'x' });

    // Without a graph, or with a node the graph does not have: 400, and no thread is left.
    const id = randomUUID();
    expect((await sdkFailure(api.client.threads.create({ threadId: id, supersteps: [{ updates: [{ asNode: 'first', values: {} }] }] }))).status).toBe(400);
    const refused = await sdkFailure(api.client.threads.create({ threadId: id, graphId: 'lg-two', supersteps: [{ updates: [{ asNode: 'nowhere', values: {} }] }] }));
    expect(refused.status).toBe(400);
    expect((await sdkFailure(api.client.threads.get(id))).status).toBe(404);
  });
});
