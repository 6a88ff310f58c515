import { randomUUID } from 'node:crypto';
import { request, type IncomingHttpHeaders } from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import { compareEventIds } from '../../src/domain/event-ids.js';
import type { StoredEvent } from '../../src/domain/types.js';
import { call } from '../support/app.js';
import { listenerCount } from '../support/listeners.js';
import { waitFor } from '../support/wait.js';
import { eventsOf, openRaw, readFrames, type Frame, type Received } from '../support/sse.js';
import type { RunHarness } from './scenarios.js';
import { brief } from '../support/events.js';

const T = 'DefaultTenant';
/** Every test here finishes well within this. */
const TEST_MS = 30_000;

/** POST /api/runs/wait. */
export function postWait(url: string, body: Record<string, unknown>, init: RequestInit = {}): ReturnType<typeof call> {
  return call(`${url}/api/runs/wait`, { ...init, method: 'POST', json: body });
}

/** POST /api/approval/respond (with `wait_ms` when given). */
export function respond(url: string, body: { id: string; approved: boolean; comment?: string; wait_ms?: number }): ReturnType<typeof call> {
  return call(`${url}/api/approval/respond`, { method: 'POST', json: body });
}

export function cancelRun(url: string, runId: string): ReturnType<typeof call> {
  return call(`${url}/api/runs/${runId}/cancel`, { method: 'POST' });
}

/** The one run of `session` once it has `status` (the run started by a wait that is still held). */
export async function sessionRun(url: string, session: string, status: string, timeoutMs = 15_000): Promise<Record<string, any>> {
  return waitFor(
    `the run of session ${session} to be ${status}`,
    async () => {
      const runs = (await call(`${url}/api/runs?session_id=${session}`)).body?.runs as Record<string, any>[] | undefined;
      return runs?.length === 1 && runs[0]!.status === status ? runs[0] : undefined;
    },
    timeoutMs,
  );
}

const ACTIVE = ['queued', 'running', 'interrupted'];

/**
 * When the test ends, however it ends, cancels the runs of `session` still active, so a failed
 * test leaves no waiter running (a worker would wait for it at shutdown).
 */
export function cancelActiveOnFinish(url: string, session: string): void {
  onTestFinished(async () => {
    const runs = ((await call(`${url}/api/runs?session_id=${session}`)).body?.runs ?? []) as { id: string; status: string }[];
    for (const run of runs) if (ACTIVE.includes(run.status)) await cancelRun(url, run.id);
  });
}

/** The run as a wait answers it, without what GET /api/runs/{id} does not have. */
function plainRun(waited: Record<string, any>): Record<string, any> {
  const { state: _state, approval: _approval, ...run } = waited;
  return run;
}

/** A POST /api/runs/stream response read as it comes. */
export interface RunStream {
  status: number;
  headers: IncomingHttpHeaders;
  /** Every parsed block, the `retry:` line included. */
  frames: Frame[];
  /** Everything received (the JSON error when the answer is not a stream). */
  text(): string;
  /** Resolves when the response ended or the connection closed. */
  ended: Promise<void>;
  /** True once the server ended the body (not the connection failing mid-way). */
  finished(): boolean;
  destroy(): void;
}

/** POSTs `body` to /api/runs/stream and resolves once the response headers arrived. */
export function openRunStream(url: string, body: Record<string, unknown>): Promise<RunStream> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(`${url}/api/runs/stream`, {
      method: 'POST',
      agent: false,
      headers: { Accept: 'text/event-stream', 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) },
    });
    req.once('error', reject);
    req.once('response', (res) => {
      const { frames, text, ended, finished } = readFrames(res);
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        frames,
        text,
        ended,
        finished,
        destroy: () => req.destroy(),
      });
    });
    req.end(payload);
  });
}

/**
 * How long {@link within} waits before naming what hung: not a bound on speed (a loaded machine
 * may take long), only a failure that says what never came, before the test's own timeout.
 */
const HANG_MS = 25_000;

/** Waits for `promise`, failing with `what` after {@link HANG_MS} (a stream that should end but hangs). */
export async function within<T>(what: string, promise: Promise<T>, timeoutMs = HANG_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: not within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The retained events of one run, with their ids, as the bus has them. */
async function storedEventsOf(h: RunHarness, runId: string): Promise<StoredEvent[]> {
  return (await h.events.readAfter(T, '0-0', 100_000)).filter((e) => e.event.run_id === runId);
}

function expectRising(events: Received[]): void {
  for (let i = 1; i < events.length; i += 1) expect(compareEventIds(events[i]!.id, events[i - 1]!.id)).toBeGreaterThan(0);
}

/** Opens GET /api/events/stream and closes it when the test ends. */
async function openEvents(h: RunHarness, query: string, headers: Record<string, string> = {}) {
  const stream = await openRaw(`${h.url}/api/events/stream${query}`, headers);
  onTestFinished(() => stream.destroy());
  expect(stream.status).toBe(200);
  return stream;
}

const hasType = (type: string) => (frames: Frame[]) => eventsOf(frames).some((e) => e.event.type === type);

/**
 * POST /api/runs/wait, POST /api/runs/stream and POST /api/approval/respond with `wait_ms`,
 * for one harness (embedded, or Redis with worker processes).
 */
export function runWaitScenarios(name: string, harness: () => RunHarness): void {
  describe(`run waits and streams: ${name}`, () => {
    it('wait answers 200 once echo completes: the run as GET /api/runs/{id}, plus its final state', async () => {
      const h = harness();
      const listeners = listenerCount(h.events);
      const response = await postWait(h.url, { agent_id: 'echo', input: { message: 'hi', n: 7 } });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const body = response.body;
      expect(body).toMatchObject({ agent_id: 'echo', status: 'completed' });
      // The echo agent's final state is its input plus "echoed": true, nothing else (CONTRACT.md).
      expect(body.state).toEqual({ message: 'hi', n: 7, echoed: true });
      expect(body.approval).toBeUndefined();
      expect(response.headers.get('location')).toBe(`/api/runs/${body.id}`);
      expect(plainRun(body)).toEqual((await call(`${h.url}/api/runs/${body.id}`)).body);
      const checkpoint = (await call(`${h.url}/api/sessions/state?session_id=${body.session_id}`)).body;
      expect(checkpoint).toMatchObject({ node_id: '__end__', state: body.state });
      // The wait let go of its subscription.
      expect(listenerCount(h.events)).toBe(listeners);
    });

    it(
      'wait answers 200 interrupted for human-review with the approval and the state; respond with wait_ms answers the completed run',
      async () => {
        const h = harness();
        const waited = await postWait(h.url, { agent_id: 'human-review', input: { topic: 'waits' }, wait_ms: 20_000 });
        expect(waited.status, JSON.stringify(waited.body)).toBe(200);
        const run = waited.body;
        expect(run).toMatchObject({ agent_id: 'human-review', status: 'interrupted', approval_id: expect.any(String) });
        expect(run.approval).toEqual({ id: run.approval_id, prompt: 'Publish the draft?', node_id: 'review', requested_at: expect.any(String) });
        expect(run.state).toMatchObject({ topic: 'waits', draft: 'Draft: waits' });
        expect(run.state.outcome).toBeUndefined();
        expect(plainRun(run)).toEqual((await call(`${h.url}/api/runs/${run.id}`)).body);
        const pending = (await call(`${h.url}/api/approval/pending?limit=500`)).body.pending.find((a: { id: string }) => a.id === run.approval_id);
        expect(pending).toMatchObject({ run_id: run.id, session_id: run.session_id, requested_at: run.approval.requested_at });

        const listeners = listenerCount(h.events);
        const answer = await respond(h.url, { id: run.approval_id, approved: true, comment: 'ship it', wait_ms: 20_000 });
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        expect(answer.body).toMatchObject({ id: run.approval_id, status: 'approved' });
        const resumed = answer.body.run;
        expect(resumed).toMatchObject({ id: run.id, session_id: run.session_id, status: 'completed' });
        expect(resumed.state).toMatchObject({ topic: 'waits', draft: 'Draft: waits', approved: true, comment: 'ship it', outcome: 'published' });
        expect(resumed.approval).toBeUndefined();
        expect(plainRun(resumed)).toEqual((await call(`${h.url}/api/runs/${run.id}`)).body);
        expect(listenerCount(h.events)).toBe(listeners);
      },
      TEST_MS,
    );

    it('respond with wait_ms, rejecting: the run discards and the answer carries the comment', async () => {
      const h = harness();
      const waited = await postWait(h.url, { agent_id: 'human-review', input: {}, wait_ms: 20_000 });
      expect(waited.body.status).toBe('interrupted');
      const answer = await respond(h.url, { id: waited.body.approval_id, approved: false, comment: 'not yet', wait_ms: 20_000 });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body).toMatchObject({ id: waited.body.approval_id, status: 'rejected', run: { id: waited.body.id, status: 'completed' } });
      expect(answer.body.run.state).toMatchObject({ approved: false, comment: 'not yet', outcome: 'discarded' });
      // A second answer is refused as before, also with wait_ms, and holds nothing.
      const again = await respond(h.url, { id: waited.body.approval_id, approved: true, wait_ms: 1_000 });
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('conflict');
    });

    it('respond with wait_ms answers the run’s next stop: the next approval of a run that asks again', async () => {
      const h = harness();
      const waited = await postWait(h.url, { agent_id: 'double-check', input: {}, wait_ms: 20_000 });
      expect(waited.body).toMatchObject({ status: 'interrupted', approval: { prompt: 'Approve?', node_id: 'ask' } });
      const first = await respond(h.url, { id: waited.body.approval_id, approved: true, comment: 'one', wait_ms: 20_000 });
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      const second = first.body.run;
      expect(second).toMatchObject({ id: waited.body.id, status: 'interrupted', approval: { prompt: 'Are you sure?', node_id: 'ask' } });
      expect(second.approval.id).toBe(second.approval_id);
      expect(second.approval.id).not.toBe(waited.body.approval_id);
      const third = (await respond(h.url, { id: second.approval_id, approved: true, wait_ms: 20_000 })).body.run;
      expect(third).toMatchObject({ status: 'interrupted', approval: { prompt: 'Final?', node_id: 'confirm' } });
      const done = (await respond(h.url, { id: third.approval_id, approved: false, wait_ms: 20_000 })).body.run;
      expect(done).toMatchObject({ status: 'completed', state: { first: true, first_comment: 'one', second: true, final: false } });
    });

    it('wait_ms passing first answers 202 with the run as it stands (running, no state)', async () => {
      const h = harness();
      const session = `s-${randomUUID()}`;
      cancelActiveOnFinish(h.url, session);
      const t0 = Date.now();
      const response = await postWait(h.url, { agent_id: 'waiter', session_id: session, input: {}, wait_ms: 300 });
      const elapsed = Date.now() - t0;
      expect(response.status, JSON.stringify(response.body)).toBe(202);
      expect(elapsed).toBeGreaterThanOrEqual(290);
      expect(response.body).toMatchObject({ session_id: session, agent_id: 'waiter', status: 'running' });
      expect(response.body.state).toBeUndefined();
      expect(response.body.approval).toBeUndefined();
      expect(response.headers.get('location')).toBe(`/api/runs/${response.body.id}`);
      const cancelled = await cancelRun(h.url, response.body.id);
      expect(cancelled.body).toMatchObject({ id: response.body.id, status: 'cancelled' });
    });

    it('a run failing while waited on: 200 failed with its error', async () => {
      const h = harness();
      const response = await postWait(h.url, { agent_id: 'bigint', input: {}, wait_ms: 20_000 });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body).toMatchObject({ agent_id: 'bigint', status: 'failed', error: expect.stringContaining('BigInt') });
      expect(response.body.approval).toBeUndefined();
      expect(plainRun(response.body)).toEqual((await call(`${h.url}/api/runs/${response.body.id}`)).body);
    });

    it('a run cancelled by another request while waited on: 200 cancelled', async () => {
      const h = harness();
      const session = `s-${randomUUID()}`;
      cancelActiveOnFinish(h.url, session);
      let settled = false;
      const waiting = postWait(h.url, { agent_id: 'waiter', session_id: session, input: {}, wait_ms: 25_000 }).finally(() => (settled = true));
      const run = await sessionRun(h.url, session, 'running');
      expect(settled).toBe(false);
      const cancelled = await cancelRun(h.url, run.id);
      expect(cancelled.status).toBe(200);
      // 200 (not 202) within wait_ms: the cancel ended the wait, not its 25 s.
      const response = await waiting;
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body).toMatchObject({ id: run.id, status: 'cancelled', error: 'cancelled' });
      expect(response.body.state).toEqual(expect.any(Object));
    });

    it('the client leaving does not cancel the run; the wait lets go of its subscription', async () => {
      const h = harness();
      const session = `s-${randomUUID()}`;
      cancelActiveOnFinish(h.url, session);
      const listeners = listenerCount(h.events);
      const controller = new AbortController();
      const waiting = fetch(`${h.url}/api/runs/wait`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ agent_id: 'waiter', session_id: session, input: {}, wait_ms: 25_000 }),
        signal: controller.signal,
      });
      const run = await sessionRun(h.url, session, 'running');
      expect(listenerCount(h.events)).toBe(listeners + 1);
      controller.abort();
      await expect(waiting).rejects.toThrow();
      // The server saw the client go: the hold ended and unsubscribed.
      await waitFor('the held wait to let go', () => listenerCount(h.events) === listeners, 5_000);
      expect((await call(`${h.url}/api/runs/${run.id}`)).body.status).toBe('running');
      const events = (await h.events.readAfter(T, '0-0', 100_000)).filter((e) => e.event.run_id === run.id).map((e) => e.event.type);
      expect(events).not.toContain('cancelled');
      const cancelled = await cancelRun(h.url, run.id);
      expect(cancelled.body).toMatchObject({ id: run.id, status: 'cancelled' });
    });

    // By the time the stop event arrives, the run queued behind (multitask: enqueue) may have
    // started and written its own checkpoint: the answer must still be this run's final state.
    it('a wait on a run with another queued behind it answers its own final state, not the next run’s', async () => {
      const h = harness();
      for (let i = 0; i < 10; i += 1) {
        const session = `s-${randomUUID()}`;
        cancelActiveOnFinish(h.url, session);
        const slow = { text: 'a b c d e f g h i j k l m n o p', delay_ms: 1_000 };
        const first = await call(`${h.url}/api/runs`, { method: 'POST', json: { agent_id: 'stream-words', session_id: session, input: slow } });
        await sessionRun(h.url, session, 'running');
        const waiting = postWait(h.url, { agent_id: 'stream-words', session_id: session, multitask: 'enqueue', input: { m: 1, text: 'x' }, wait_ms: 20_000 });
        await waitFor('the waited run to be queued', async () => (await call(`${h.url}/api/runs?session_id=${session}`)).body.runs.length === 2);
        const next = await call(`${h.url}/api/runs`, {
          method: 'POST',
          json: { agent_id: 'stream-words', session_id: session, multitask: 'enqueue', input: { m: 2, text: 'y' } },
        });
        expect(next.status).toBe(202);
        await cancelRun(h.url, first.body.run_id);
        const response = await waiting;
        expect(response.body.status).toBe('completed');
        expect(response.body.state, `try ${i}`).toMatchObject({ m: 1, text: 'x', words: 1 });
      }
    });

    it('errors before the hold are JSON: unknown agent, bad wait_ms, busy session, unknown approval', async () => {
      const h = harness();
      const listeners = listenerCount(h.events);
      const unknown = await postWait(h.url, { agent_id: 'nobody', wait_ms: 1_000 });
      expect(unknown.status).toBe(400);
      expect(unknown.headers.get('content-type')).toMatch(/^application\/json/);
      expect(unknown.body.error.code).toBe('unknown_agent');
      for (const wait_ms of [0, 300_001, 1.5, '1000']) {
        const bad = await postWait(h.url, { agent_id: 'echo', wait_ms });
        expect(bad.status, `wait_ms ${JSON.stringify(wait_ms)}`).toBe(400);
        expect(bad.body.error).toMatchObject({ code: 'bad_request', message: expect.stringContaining('wait_ms') });
      }
      // wait_ms belongs to the wait, not to the stream nor to POST /api/runs.
      expect((await call(`${h.url}/api/runs`, { method: 'POST', json: { agent_id: 'echo', wait_ms: 1_000 } })).status).toBe(400);

      const session = `s-${randomUUID()}`;
      cancelActiveOnFinish(h.url, session);
      const paused = await postWait(h.url, { agent_id: 'human-review', session_id: session, wait_ms: 20_000 });
      expect(paused.body.status).toBe('interrupted');
      const busy = await postWait(h.url, { agent_id: 'echo', session_id: session, wait_ms: 1_000 });
      expect(busy.status).toBe(409);
      expect(busy.body.error.code).toBe('conflict');

      const unknownStream = await openRunStream(h.url, { agent_id: 'nobody' });
      await unknownStream.ended;
      expect(unknownStream.status).toBe(400);
      expect(unknownStream.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(unknownStream.text()).error.code).toBe('unknown_agent');
      const busyStream = await openRunStream(h.url, { agent_id: 'echo', session_id: session });
      await busyStream.ended;
      expect(busyStream.status).toBe(409);
      expect(JSON.parse(busyStream.text()).error.code).toBe('conflict');
      const badStream = await openRunStream(h.url, { agent_id: 'echo', wait_ms: 1_000 });
      await badStream.ended;
      expect(badStream.status).toBe(400);

      const noApproval = await respond(h.url, { id: 'no-such-approval', approved: true, wait_ms: 1_000 });
      expect(noApproval.status).toBe(404);
      expect((await respond(h.url, { id: paused.body.approval_id, approved: true, wait_ms: 0 })).status).toBe(400);
      // None of these left a subscription behind.
      expect(listenerCount(h.events)).toBe(listeners);
      expect((await respond(h.url, { id: paused.body.approval_id, approved: false, wait_ms: 20_000 })).body.run.status).toBe('completed');
    });

    it(
      'stream: echo’s events in order with the ids /api/events/stream has, then the response ends',
      async () => {
        const h = harness();
        const listeners = listenerCount(h.events);
        const stream = await openRunStream(h.url, { agent_id: 'echo', input: { message: 'streamed' } });
        onTestFinished(() => stream.destroy());
        expect(stream.status, stream.text()).toBe(200);
        expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
        expect(stream.headers['cache-control']).toBe('no-cache');
        const runId = stream.headers['x-run-id'] as string;
        const session = stream.headers['x-session-id'] as string;
        expect(runId).toEqual(expect.any(String));
        expect(session).toEqual(expect.any(String));
        await within('the stream to end after completed', stream.ended);
        expect(stream.finished()).toBe(true);
        expect(stream.frames[0]).toEqual({ retry: 3000 });
        const received = eventsOf(stream.frames);
        expect(received.map((e) => brief(e.event))).toEqual([
          'node_start:receive',
          'node_end:receive:ok',
          'node_start:respond',
          'node_end:respond:ok',
          'completed',
        ]);
        expect(received.every((e) => e.event.run_id === runId && e.event.session === session)).toBe(true);
        expectRising(received);
        expect((await call(`${h.url}/api/runs/${runId}`)).body).toMatchObject({ status: 'completed', session_id: session });

        // The same ids as the bus retains, and as /api/events/stream replays for the session.
        const stored = await storedEventsOf(h, runId);
        expect(received.map((e) => e.id)).toEqual(stored.map((e) => e.id));
        expect(received.map((e) => e.event)).toEqual(stored.map((e) => e.event));
        const replay = await openEvents(h, `?session=${session}&last_event_id=0-0`);
        await replay.waitForFrames(hasType('completed'), 'the replayed completed event');
        expect(eventsOf(replay.frames)).toEqual(received);
        replay.destroy();
        await waitFor('the streams to let go', () => listenerCount(h.events) === listeners, 5_000);
      },
      TEST_MS,
    );

    it(
      'stream: human-review ends at interrupted; /api/events/stream from the last id received has exactly the rest',
      async () => {
        const h = harness();
        const listeners = listenerCount(h.events);
        const stream = await openRunStream(h.url, { agent_id: 'human-review', input: { topic: 'resume' } });
        onTestFinished(() => stream.destroy());
        expect(stream.status, stream.text()).toBe(200);
        const runId = stream.headers['x-run-id'] as string;
        const session = stream.headers['x-session-id'] as string;
        cancelActiveOnFinish(h.url, session);
        await within('the stream to end after interrupted', stream.ended);
        expect(stream.finished()).toBe(true);
        const received = eventsOf(stream.frames);
        expect(received.map((e) => brief(e.event))).toEqual(['node_start:draft', 'node_end:draft:ok', 'node_start:review', 'interrupted:review']);
        const last = received.at(-1)!;
        const run = (await call(`${h.url}/api/runs/${runId}`)).body;
        expect(run).toMatchObject({ status: 'interrupted', session_id: session, approval_id: last.event.approval_id });

        // Resumed before the answer (live), and after the run completed (replay): the same events.
        const live = await openEvents(h, `?session=${session}`, { 'Last-Event-ID': last.id });
        await live.waitForFrames((f) => f.some((x) => x.retry !== undefined), 'the live stream to open');
        const answer = await respond(h.url, { id: last.event.approval_id!, approved: true, comment: 'go' });
        expect(answer.status).toBe(200);
        await live.waitForFrames(hasType('completed'), 'completed on the resumed stream');
        const replay = await openEvents(h, `?session=${session}`, { 'Last-Event-ID': last.id });
        await replay.waitForFrames(hasType('completed'), 'completed on the replayed stream');

        const later = (await storedEventsOf(h, runId)).filter((e) => compareEventIds(e.id, last.id) > 0);
        const expected = later.map((e) => ({ id: e.id, event: e.event }));
        expect(expected.map((e) => brief(e.event))).toEqual([
          'approval_decided',
          'node_start:review',
          'node_end:review:ok',
          'node_start:publish',
          'node_end:publish:ok',
          'completed',
        ]);
        expect(eventsOf(live.frames)).toEqual(expected);
        expect(eventsOf(replay.frames)).toEqual(expected);
        // Together with what the run stream sent: the whole run, once each, in order.
        const all = [...received, ...eventsOf(live.frames)];
        expect(all.map((e) => e.id)).toEqual((await storedEventsOf(h, runId)).map((e) => e.id));
        expectRising(all);
        live.destroy();
        replay.destroy();
        await waitFor('the streams to let go', () => listenerCount(h.events) === listeners, 5_000);
      },
      TEST_MS,
    );

    it('stream: the client leaving does not cancel the run; the stream lets go of its subscription', async () => {
      const h = harness();
      const listeners = listenerCount(h.events);
      const stream = await openRunStream(h.url, { agent_id: 'waiter', input: {} });
      onTestFinished(() => stream.destroy());
      expect(stream.status, stream.text()).toBe(200);
      const runId = stream.headers['x-run-id'] as string;
      cancelActiveOnFinish(h.url, stream.headers['x-session-id'] as string);
      await waitFor('node_start on the stream', () => eventsOf(stream.frames).some((e) => brief(e.event) === 'node_start:wait'), 10_000);
      expect(listenerCount(h.events)).toBe(listeners + 1);
      stream.destroy();
      await waitFor('the run stream to let go', () => listenerCount(h.events) === listeners, 5_000);
      expect((await call(`${h.url}/api/runs/${runId}`)).body.status).toBe('running');
      expect((await cancelRun(h.url, runId)).body).toMatchObject({ id: runId, status: 'cancelled' });
    });

    it('stream: stream-words sends each token as a custom event before completed', async () => {
      const h = harness();
      const stream = await openRunStream(h.url, { agent_id: 'stream-words', input: { text: 'one two three four', delay_ms: 20 } });
      onTestFinished(() => stream.destroy());
      expect(stream.status, stream.text()).toBe(200);
      await within('the stream to end after completed', stream.ended);
      const received = eventsOf(stream.frames).map((e) => e.event);
      const tokens = received.filter((e) => e.type === 'custom');
      expect(tokens.map((e) => [e.name, e.data])).toEqual(['one', 'two', 'three', 'four'].map((word, index) => ['token', { index, word }]));
      expect(received.map((e) => e.type)).toEqual(['node_start', 'custom', 'custom', 'custom', 'custom', 'node_end', 'completed']);
    });
  });
}
