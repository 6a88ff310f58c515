import { describe, expect, it } from 'vitest';
import { BACKENDS, collect, useLangGraphApi, type Part } from './runs-support.js';

/*
 * What a run that goes on from a paused thread streams, as LangGraph's server streams it: in
 * `debug` mode, first the checkpoint it goes on from (LangGraph's loop announces it again before
 * planning its tasks), then the checkpoints it writes; so the two runs' checkpoints together are
 * the thread's history, each once.
 */

/** The checkpoint payloads of a stream's `debug` parts, as step, checkpoint and parent. */
const debugCheckpoints = (parts: Part[]) =>
  parts
    .filter((part) => part.event === 'debug' && part.data?.type === 'checkpoint')
    .map((part) => ({ step: part.data.payload.metadata?.step, checkpoint: part.data.payload.checkpoint, parent_checkpoint: part.data.payload.parent_checkpoint }));

describe.each(BACKENDS)('a run going on from a paused thread streams the checkpoint it goes on from (%s)', (backend) => {
  const api = useLangGraphApi(backend);

  it.each(['lg-routed', 'lg-routed-11'])('debug: the first checkpoint is the one resumed; the two streams together are the history (%s)', async (graphId) => {
    const assistant = await api.client.assistants.create({ graphId });
    const thread = (await api.client.threads.create()).thread_id;
    const first = await collect(
      api.client.runs.stream(thread, assistant.assistant_id, { input: { messages: [{ role: 'human', content: 'weather?' }] }, streamMode: 'debug', interruptBefore: ['router'] }),
    );
    const before = debugCheckpoints(first);
    expect(before.map((c) => c.step)).toEqual([-1, 0]);
    const history = await api.client.threads.getHistory(thread);
    const latest = history[0]!.checkpoint;

    const second = await collect(api.client.runs.stream(thread, assistant.assistant_id, { streamMode: 'debug', checkpoint: latest }));
    const after = debugCheckpoints(second);
    expect(after[0]!.checkpoint).toEqual(latest);
    const all = (await api.client.threads.getHistory(thread)).reverse();
    expect([...before, ...after.slice(1)]).toEqual(all.map((s) => ({ step: s.metadata?.step, checkpoint: s.checkpoint, parent_checkpoint: s.parent_checkpoint })));
  });
});
