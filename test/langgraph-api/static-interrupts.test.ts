import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BACKENDS, useLangGraphApi } from './runs-support.js';

/*
 * A graph run stopped by `interruptBefore` (a static interrupt, no `interrupt()` value), through
 * the SDK: as on LangGraph's server, its wait says it paused (`__interrupt__: []`) and the
 * thread lists the task it stopped before, with no interrupt values (`{<task id>: []}`).
 */

describe.each(BACKENDS)('a graph run paused by interruptBefore (%s)', (backend) => {
  const api = useLangGraphApi(backend);

  it('answers its wait with __interrupt__ [] and lists the pending task under the thread’s interrupts', async () => {
    const thread = randomUUID();
    const paused = await api.client.runs.wait(thread, 'lg-two', { input: { word: 'a' }, ifNotExists: 'create', interruptBefore: ['second'] });
    expect(paused).toEqual({ steps: ['first'], word: 'a', __interrupt__: [] });

    const state = await api.client.threads.getState(thread);
    expect(state.next).toEqual(['second']);
    const got = await api.client.threads.get(thread);
    expect(got.status).toBe('interrupted');
    expect(got.interrupts).toEqual({ [state.tasks[0]!.id]: [] });

    // Going on (no input) runs to the end: no __interrupt__, no interrupts.
    expect(await api.client.runs.wait(thread, 'lg-two', { input: null })).toEqual({ steps: ['first', 'second'], word: 'a' });
    expect((await api.client.threads.get(thread)).interrupts).toEqual({});
  });

  it('answers a run that ran to its end without __interrupt__', async () => {
    expect(await api.client.runs.wait(randomUUID(), 'lg-two', { input: { word: 'b' }, ifNotExists: 'create' })).toEqual({ steps: ['first', 'second'], word: 'b' });
  });
});
