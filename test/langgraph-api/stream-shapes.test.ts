import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BACKENDS, collect, useLangGraphApi } from './runs-support.js';

/*
 * The `debug` and `checkpoints` stream modes in the shape of LangGraph's server: a checkpoint
 * names itself and its parent as references (`checkpoint`, `parent_checkpoint`), the same ones
 * the thread's history shows, and carries no callbacks or `__` internals of its config.
 */

describe.each(BACKENDS)('LangGraph debug and checkpoints stream modes (%s)', (backend) => {
  const api = useLangGraphApi(backend);

  it("debug checkpoints name the same checkpoints, in order, as the thread's history", async () => {
    const thread = randomUUID();
    const parts = await collect(api.client.runs.stream(thread, 'lg-two', { input: { word: 'd' }, ifNotExists: 'create', streamMode: 'debug' }));
    const checkpoints = parts.filter((p) => p.event === 'debug' && (p.data as any).type === 'checkpoint').map((p) => (p.data as any).payload);
    expect(checkpoints.length).toBeGreaterThan(1);
    const history = (await api.client.threads.getHistory(thread, { limit: checkpoints.length })).reverse();
    const refs = (states: any[]) => states.map((s) => ({ step: s.metadata?.step, checkpoint: s.checkpoint, parent_checkpoint: s.parent_checkpoint }));
    expect(refs(checkpoints)).toEqual(refs(history));
    for (const payload of checkpoints) {
      expect(payload).not.toHaveProperty('parentConfig');
      expect(JSON.stringify(payload.config)).not.toMatch(/"__pregel|callbacks/);
      expect(payload.checkpoint).toMatchObject({ thread_id: thread, checkpoint_ns: '', checkpoint_id: expect.any(String) });
    }
  });

  it('checkpoints chunks carry their references too', async () => {
    const thread = randomUUID();
    const parts = await collect(api.client.runs.stream(thread, 'lg-two', { input: { word: 'c' }, ifNotExists: 'create', streamMode: 'checkpoints' }));
    const chunks = parts.filter((p) => p.event === 'checkpoints').map((p) => p.data as any);
    expect(chunks.map((c) => c.next)).toEqual([['__start__'], ['first'], ['second'], []]);
    expect(chunks[0].parent_checkpoint).toBeNull();
    for (let i = 1; i < chunks.length; i += 1) expect(chunks[i].parent_checkpoint).toEqual(chunks[i - 1].checkpoint);
  });
});
