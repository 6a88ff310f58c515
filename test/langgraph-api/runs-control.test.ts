import { randomUUID } from 'node:crypto';
import { Client } from '@langchain/langgraph-sdk';
import { describe, expect, it } from 'vitest';
import { BACKENDS, collect, gates, useLangGraphApi, type LangGraphApi } from './runs-support.js';
import { waitFor } from '../support/wait.js';

/*
 * The LangGraph Server API's control of runs through the real SDK Client, on both backends:
 * human in the loop (interrupts, command.resume), cancel, every multitask strategy, a client
 * leaving with on_disconnect cancel, and waits kept alive while their run goes on.
 */

/** Starts a run of lg-gated held at its gate on a new thread. */
async function heldRun(api: LangGraphApi, thread = randomUUID()) {
  const before = gates.waiting;
  const run = await api.client.runs.create(thread, 'lg-gated', { input: { word: 'hold' }, ifNotExists: 'create' });
  await waitFor('the run held at its gate', () => gates.waiting > before);
  return { thread, run };
}

describe.each(BACKENDS)('LangGraph runs through the SDK: interrupts, cancel, multitask (%s)', (backend) => {
  const api = useLangGraphApi(backend);

  it('human in the loop: wait stops at the interrupt, a run with command.resume goes on to the second one, then completes', async () => {
    const thread = randomUUID();
    let first: string | undefined;
    const paused = (await api.client.runs.wait(thread, 'lg-review', { input: { word: 'r' }, ifNotExists: 'create', onRunCreated: (m) => (first = m.run_id) })) as any;
    expect(paused).toEqual({ steps: [], word: 'r', __interrupt__: [{ value: { question: 'first?' }, id: expect.any(String) }] });
    // The interrupt is an approval of the run, in the inbox; the run is interrupted.
    const pending = (await api.get('/api/approval/pending?limit=500')).body.pending.filter((a: any) => a.run_id === first);
    expect(pending).toEqual([expect.objectContaining({ id: `${first}.${paused.__interrupt__[0].id}`, prompt: 'first?', payload: { question: 'first?' } })]);
    expect(await api.client.runs.get(thread, first!)).toMatchObject({ status: 'interrupted' });

    let second: string | undefined;
    const again = (await api.client.runs.wait(thread, 'lg-review', { command: { resume: { ok: 1 } }, onRunCreated: (m) => (second = m.run_id) })) as any;
    expect(again).toEqual({ steps: ['first:{"ok":1}'], word: 'r', __interrupt__: [{ value: 'second?', id: expect.any(String) }] });
    // A new run resumed the graph; the paused one ended, its approval closed: nothing dangles.
    expect(second).not.toBe(first);
    expect(await api.get(`/api/runs/${first}`)).toMatchObject({ body: { status: 'cancelled', error: expect.stringMatching(/command\.resume/) } });
    expect((await api.get(`/api/approvals/${pending[0].id}`)).body.status).toBe('cancelled');

    const parts = await collect(api.client.runs.stream(thread, 'lg-review', { command: { resume: 'yes' }, streamMode: 'updates' }));
    expect(parts.map((p) => p.event)).toEqual(['metadata', 'updates', 'updates']);
    expect(parts.slice(1).map((p) => Object.keys(p.data)[0])).toEqual(['ask2', 'done']);
    const runs = await api.client.runs.list(thread);
    // As LangGraph's server lists them: a run that reached an interrupt a later run resumed ended well.
    expect(runs.map((r) => r.status)).toEqual(['success', 'success', 'success']);
    expect((await api.get(`/api/sessions/state?session_id=${thread}`)).body.state.steps).toEqual(['first:{"ok":1}', 'second:"yes"', 'done']);
  });

  it('a pause answered in the console: joinStream from the last event id gets the resumed run up to its next pause', async () => {
    const thread = randomUUID();
    let runId: string | undefined;
    const paused = await collect(api.client.runs.stream(thread, 'lg-review', { input: { word: 'j' }, streamMode: 'updates', ifNotExists: 'create', onRunCreated: (m) => (runId = m.run_id) }));
    expect(paused.map((p) => p.event)).toEqual(['metadata', 'updates']);
    expect(paused[1]!.data).toEqual({ __interrupt__: [{ value: { question: 'first?' }, id: expect.any(String) }] });
    const [approval] = (await api.get('/api/approval/pending?limit=500')).body.pending.filter((a: any) => a.run_id === runId);
    expect((await api.post('/api/approval/respond', { id: approval.id, resume: 'from the console' })).status).toBe(200);
    const resumed = await collect(api.client.runs.joinStream(thread, runId!, { lastEventId: paused.at(-1)!.id }));
    expect(resumed.map((p) => p.data)).toEqual([
      { ask: { steps: ['first:"from the console"'] } },
      { __interrupt__: [{ value: 'second?', id: expect.any(String) }] },
    ]);
    expect(await api.client.runs.get(thread, runId!)).toMatchObject({ status: 'interrupted' });
  });

  it('a native agent paused at its approval: command.resume answers it and the same run goes on', async () => {
    const thread = randomUUID();
    let runId: string | undefined;
    const paused = (await api.client.runs.wait(thread, 'human-review', { input: { topic: 't' }, ifNotExists: 'create', onRunCreated: (m) => (runId = m.run_id) })) as any;
    expect(paused.__interrupt__).toEqual([{ value: 'Publish the draft?', id: expect.stringMatching(new RegExp(`^${runId}\\.`)) }]);
    // Anything but a resume is refused while it waits.
    await expect(api.client.runs.wait(thread, 'human-review', { input: { topic: 'other' } })).rejects.toThrow(/409/);
    const done = await api.client.runs.wait(thread, 'human-review', { command: { resume: { approved: true } } });
    expect(done).toMatchObject({ outcome: 'published' });
    const approval = (await api.get(`/api/approvals/${paused.__interrupt__[0].id}`)).body;
    expect(approval).toMatchObject({ status: 'approved', resume: { approved: true }, decided_by: expect.any(String) });
    expect((await api.get(`/api/runs?session_id=${thread}`)).body.runs).toEqual([expect.objectContaining({ id: runId, status: 'completed' })]);
  });

  it('cancel interrupts a running run (interrupted), answers 204 with wait; an ended run is left as it is', async () => {
    const { thread, run } = await heldRun(api);
    await api.client.runs.cancel(thread, run.run_id, true);
    expect(await api.client.runs.get(thread, run.run_id)).toMatchObject({ status: 'interrupted' });
    expect(await api.get(`/api/runs/${run.run_id}`)).toMatchObject({ body: { status: 'cancelled' } });
    await expect(api.client.runs.cancel(thread, run.run_id, false, 'rollback')).resolves.toBeUndefined();
    expect((await api.post(`/threads/${thread}/runs/${run.run_id}/cancel?action=undo`, {})).status).toBe(400);
    expect((await api.post(`/threads/${randomUUID()}/runs/${run.run_id}/cancel`, {})).status).toBe(404);
  });

  it('cancel of a run paused at an interrupt closes its approval', async () => {
    const thread = randomUUID();
    let runId: string | undefined;
    const paused = (await api.client.runs.wait(thread, 'lg-review', { input: { word: 'c' }, ifNotExists: 'create', onRunCreated: (m) => (runId = m.run_id) })) as any;
    await api.client.runs.cancel(thread, runId!);
    expect((await api.get(`/api/approvals/${runId}.${paused.__interrupt__[0].id}`)).body.status).toBe('cancelled');
  });

  it('multitask reject: a second run on a busy thread is 409, the first completes', async () => {
    const { thread, run } = await heldRun(api);
    await expect(api.client.runs.create(thread, 'lg-gated', { input: { word: 'x' }, multitaskStrategy: 'reject' })).rejects.toThrow(/409/);
    gates.release();
    expect(await api.client.runs.join(thread, run.run_id)).toMatchObject({ steps: ['a:hold', 'b:hold', 'c:hold'] });
  });

  it('multitask enqueue: the second run waits (pending) and runs after the first', async () => {
    const { thread, run } = await heldRun(api);
    const queued = await api.client.runs.create(thread, 'lg-gated', { input: { word: 'next' }, multitaskStrategy: 'enqueue' });
    expect(queued).toMatchObject({ status: 'pending', multitask_strategy: 'enqueue' });
    gates.release();
    await api.client.runs.join(thread, run.run_id);
    expect(await api.client.runs.join(thread, queued.run_id)).toEqual({ steps: ['a:hold', 'b:hold', 'c:hold', 'a:next', 'b:next', 'c:next'], word: 'next' });
    expect((await api.client.runs.list(thread)).map((r) => r.status)).toEqual(['success', 'success']);
  });

  it('multitask interrupt: the running run is interrupted, the new one completes (rollback: runs-rollback.test.ts)', async () => {
    const strategy = 'interrupt';
    const { thread, run } = await heldRun(api);
    const next = await api.client.runs.create(thread, 'lg-gated', { input: { word: 'new' }, multitaskStrategy: strategy });
    expect(await api.client.runs.join(thread, next.run_id)).toMatchObject({ steps: expect.arrayContaining(['a:new', 'b:new', 'c:new']) });
    expect(await api.client.runs.get(thread, run.run_id)).toMatchObject({ status: 'interrupted' });
    expect(await api.client.runs.get(thread, next.run_id)).toMatchObject({ status: 'success', multitask_strategy: strategy });
  });

  it('on_disconnect cancel: the client leaving the stream cancels its run', async () => {
    const thread = randomUUID();
    const before = gates.waiting;
    const abort = new AbortController();
    let runId: string | undefined;
    const stream = api.client.runs.stream(thread, 'lg-gated', {
      input: { word: 'hold' },
      ifNotExists: 'create',
      onDisconnect: 'cancel',
      signal: abort.signal,
      onRunCreated: (m) => (runId = m.run_id),
    });
    const reading = collect(stream).catch(() => []);
    await waitFor('the run streamed and held at its gate', () => runId !== undefined && gates.waiting > before);
    abort.abort();
    await reading;
    await api.runUntil(runId!, 'cancelled');
  });

  it('POST /runs/cancel cancels runs by id (kept, interrupted; action rollback deletes them)', async () => {
    const { thread, run } = await heldRun(api);
    await api.client.runs.cancelMany({ threadId: thread, runIds: [run.run_id] });
    expect(await api.client.runs.get(thread, run.run_id)).toMatchObject({ status: 'interrupted' });
    const held = await heldRun(api, thread);
    expect((await api.post('/runs/cancel?action=rollback', { thread_id: thread, run_ids: [held.run.run_id] })).status).toBe(204);
    await expect(api.client.runs.get(thread, held.run.run_id)).rejects.toThrow(/404/);
    expect((await api.client.runs.list(thread)).map((r) => r.run_id)).toEqual([run.run_id]);
    expect((await api.post('/runs/cancel', { run_ids: [randomUUID()] })).status).toBe(404);
    expect((await api.post('/runs/cancel', {})).status).toBe(400);
  });
});

describe('LangGraph waits kept alive (memory, heartbeat 100 ms)', () => {
  const api = useLangGraphApi('memory', { SERVICE_SSE_HEARTBEAT_MS: '100' });

  it('a wait longer than the heartbeat answers 200 at once, newlines while the run goes on, then the values', async () => {
    const thread = randomUUID();
    const before = gates.waiting;
    const response = await fetch(`${api.app.url}/threads/${thread}/runs/wait`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'lg-gated', input: { word: 'hold' }, if_not_exists: 'create' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-location')).toMatch(new RegExp(`^/threads/${thread}/runs/`));
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toMatch(/^\n+$/);
    await waitFor('the run held at its gate', () => gates.waiting > before);
    gates.release();
    let text = new TextDecoder().decode(first.value);
    for (let part = await reader.read(); !part.done; part = await reader.read()) text += new TextDecoder().decode(part.value);
    expect(JSON.parse(text)).toEqual({ steps: ['a:hold', 'b:hold', 'c:hold'], word: 'hold' });
    // The SDK reads such an answer as any other: its fetch sees the first newline before the run goes on.
    let firstChunk: Promise<string> | undefined;
    const client = new Client({
      apiUrl: api.app.url,
      apiKey: null,
      callerOptions: {
        fetch: async (url: string, init: RequestInit) => {
          const response = await fetch(url, init);
          const [watched, passed] = response.body!.tee();
          firstChunk = watched.getReader().read().then(({ value }) => new TextDecoder().decode(value));
          return new Response(passed, { status: response.status, headers: response.headers });
        },
      },
    });
    const { thread: other, run } = await heldRun(api);
    const joined = client.runs.join(other, run.run_id);
    await waitFor('the join answered', () => firstChunk);
    expect(await firstChunk).toMatch(/^\n+$/);
    gates.release();
    expect(await joined).toEqual({ steps: ['a:hold', 'b:hold', 'c:hold'], word: 'hold' });
  });
});
