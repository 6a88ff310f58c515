import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Approval, Span } from '../../src/domain/types.js';
import { call } from '../support/app.js';
import { waitFor } from '../support/wait.js';
import { sessionEvents, sessionEventsEndingWith, startRun, waitRun, type RunHarness } from './scenarios.js';
import { brief } from '../support/events.js';
import { waitNodeMs } from '../fixtures/agents.js';

const T = 'DefaultTenant';
/** Every test here finishes well within this (the default vitest timeout is 60 s). */
const TEST_MS = 30_000;

/** The pending approvals of one run (the list is shared by every test of the backend). */
async function pendingOf(h: RunHarness, runId: string): Promise<Approval[]> {
  const response = await call(`${h.url}/api/approval/pending?limit=500`);
  expect(response.status).toBe(200);
  return (response.body.pending as Approval[]).filter((a) => a.run_id === runId);
}

/** Waits for the run to pause on the approval `id` and for that request to be the run's one pending. */
async function waitPending(h: RunHarness, runId: string, id: string): Promise<Approval> {
  await waitFor(`run ${runId} to be interrupted on ${id}`, async () => {
    const run = (await call(`${h.url}/api/runs/${runId}`)).body;
    return run.status === 'interrupted' && run.approval_id === id;
  });
  const pending = await pendingOf(h, runId);
  expect(pending.map((a) => a.id)).toEqual([id]);
  return pending[0]!;
}

async function spansOf(h: RunHarness, sessionId: string): Promise<Span[]> {
  const response = await call(`${h.url}/api/traces?session_id=${sessionId}&limit=1000`);
  expect(response.status).toBe(200);
  return response.body.traces as Span[];
}

async function historySeqs(h: RunHarness, sessionId: string): Promise<number[]> {
  const response = await call(`${h.url}/api/sessions/history?session_id=${sessionId}&limit=500`);
  expect(response.status).toBe(200);
  return (response.body.checkpoints as { seq_num: number }[]).map((c) => c.seq_num);
}

async function cancel(h: RunHarness, runId: string): Promise<{ status: number; body: any }> {
  return call(`${h.url}/api/runs/${runId}/cancel`, { method: 'POST' });
}

async function respond(h: RunHarness, id: string, approved: boolean, comment?: string): Promise<{ status: number; body: any }> {
  return call(`${h.url}/api/approval/respond`, { method: 'POST', json: { id, approved, ...(comment !== undefined ? { comment } : {}) } });
}

/** Waits until the node's span of the run exists with `status`. */
async function waitNodeSpan(h: RunHarness, sessionId: string, runId: string, node: string, status: string, timeoutMs = 5_000): Promise<Span> {
  return waitFor(
    `span ${node} of run ${runId} with status ${status}`,
    async () => (await spansOf(h, sessionId)).find((s) => s.name === node && s.attributes.run_id === runId && s.attributes.status === status),
    timeoutMs,
  );
}

/** Waits for the run's `node_start` of `node` (the node is executing). */
async function waitNodeStart(h: RunHarness, sessionId: string, runId: string, node: string): Promise<void> {
  await waitFor(`node_start ${node} of run ${runId}`, async () =>
    (await sessionEvents(h, sessionId)).some((e) => e.type === 'node_start' && e.node === node && e.run_id === runId),
  );
}

/** The run lifecycle (README "Run lifecycle") for one harness: embedded, or Redis + worker processes. */
export function runLifecycleScenarios(name: string, harness: () => RunHarness): void {
  describe(`run lifecycle: ${name}`, () => {
    it(
      'double-check: three interrupts (two in one node, one in the next) each answered in turn; the node replays its answers',
      async () => {
        const h = harness();
        const { run_id, session_id } = await startRun(h, { agent_id: 'double-check', input: {} });
        const seq = (await call(`${h.url}/api/sessions/state?session_id=${session_id}`)).body.seq_num as number;
        expect(seq).toBe(1);

        const first = await waitPending(h, run_id, `${run_id}.${seq}`);
        expect(first).toMatchObject({ session_id, node_id: 'ask', prompt: 'Approve?', agent_id: 'double-check', status: 'pending' });
        expect(await respond(h, first.id, true, 'a')).toMatchObject({ status: 200, body: { id: first.id, status: 'approved' } });

        const second = await waitPending(h, run_id, `${run_id}.${seq}.2`);
        expect(second.id).not.toBe(first.id);
        expect(second).toMatchObject({ session_id, node_id: 'ask', prompt: 'Are you sure?', status: 'pending' });
        expect(await respond(h, second.id, false, 'b')).toMatchObject({ status: 200, body: { id: second.id, status: 'rejected' } });

        // `ask` returned: a checkpoint at `confirm`, whose interrupt is `<run>.<its seq>`.
        const confirmSeq = await waitFor('the checkpoint at confirm', async () => {
          const state = (await call(`${h.url}/api/sessions/state?session_id=${session_id}`)).body;
          return state.node_id === 'confirm' ? (state.seq_num as number) : undefined;
        });
        expect(confirmSeq).toBe(seq + 1);
        const third = await waitPending(h, run_id, `${run_id}.${confirmSeq}`);
        expect(third).toMatchObject({ session_id, node_id: 'confirm', prompt: 'Final?', status: 'pending' });
        expect(await respond(h, third.id, true)).toMatchObject({ status: 200, body: { id: third.id, status: 'approved' } });

        await waitRun(h, run_id, 'completed');
        const final = (await call(`${h.url}/api/sessions/state?session_id=${session_id}`)).body;
        expect(final).toMatchObject({
          node_id: '__end__',
          state: { first: true, first_comment: 'a', second: false, second_comment: 'b', final: true },
        });
        expect(await pendingOf(h, run_id)).toEqual([]);
        const decided = await Promise.all([first.id, second.id, third.id].map((id) => h.store.approvals.getApproval(T, id)));
        expect(decided.map((a) => [a?.status, a?.comment])).toEqual([
          ['approved', 'a'],
          ['rejected', 'b'],
          ['approved', ''],
        ]);

        const events = (await sessionEvents(h, session_id)).filter((e) => e.run_id === run_id);
        expect(events.filter((e) => e.type === 'interrupted').map((e) => e.approval_id)).toEqual([first.id, second.id, third.id]);
        expect(events.filter((e) => e.type === 'approval_decided').map((e) => [e.approval_id, e.approved])).toEqual([
          [first.id, true],
          [second.id, false],
          [third.id, true],
        ]);
        // Each answer resumed the run: `ask` ran three times (from the top), `confirm` twice.
        expect(events.filter((e) => brief(e) === 'node_start:ask')).toHaveLength(3);
        expect(events.filter((e) => brief(e) === 'node_start:confirm')).toHaveLength(2);
        expect(events.map(brief).at(-1)).toBe('completed');
      },
      TEST_MS,
    );

    it(
      'bigint: a node returning a BigInt fails the run with a failed event; the session then takes a patch, a resume and a new run',
      async () => {
        const h = harness();
        const { run_id, session_id } = await startRun(h, { agent_id: 'bigint', input: {} });
        const failed = await waitRun(h, run_id, 'failed');
        expect(failed.error).toMatch(/BigInt/);
        expect(failed.error).toContain('Do not know how to serialize a BigInt');
        const events = (await sessionEventsEndingWith(h, session_id, 'failed')).filter((e) => e.run_id === run_id);
        const failedEvents = events.filter((e) => e.type === 'failed');
        expect(failedEvents).toHaveLength(1);
        expect(failedEvents[0]!.error).toBe(failed.error);
        expect(events.map(brief).slice(-2)).toEqual(['node_end:count:error', 'failed']);
        const root = (await spansOf(h, session_id)).find((s) => s.span_id === run_id);
        expect(root?.attributes).toMatchObject({ status: 'failed' });

        // Nothing is left active: the session is free again.
        const patched = await call(`${h.url}/api/sessions/state?session_id=${session_id}`, { method: 'POST', json: { state: { patched: true } } });
        expect(patched.status).toBe(200);
        const resumed = await call(`${h.url}/api/sessions/resume?session_id=${session_id}`, { method: 'POST' });
        expect(resumed.status, JSON.stringify(resumed.body)).toBe(202);
        expect((await waitRun(h, resumed.body.run_id, 'failed')).error).toContain('BigInt');
        const again = await call(`${h.url}/api/runs`, { method: 'POST', json: { agent_id: 'bigint', session_id } });
        expect(again.status, JSON.stringify(again.body)).toBe(202);
        expect((await waitRun(h, again.body.run_id, 'failed')).error).toContain('BigInt');
        const all = (await call(`${h.url}/api/runs?session_id=${session_id}`)).body.runs;
        expect(all.map((r: { status: string }) => r.status)).toEqual(['failed', 'failed', 'failed']);
      },
      TEST_MS,
    );

    it(
      'cancels a queued run whose job waits for a free slot at once; it never starts, even once the slots free up',
      async () => {
        const h = harness();
        // Every slot busy with a waiter: the next run's job stays in the queue.
        const fillers = await Promise.all(Array.from({ length: h.slots! }, () => startRun(h, { agent_id: 'waiter', input: {} })));
        for (const filler of fillers) await waitRun(h, filler.run_id, 'running');
        const queued = await startRun(h, { agent_id: 'echo', input: { message: 'never' } });
        expect((await call(`${h.url}/api/runs/${queued.run_id}`)).body.status).toBe('queued');

        const response = await cancel(h, queued.run_id);
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        expect(response.body).toMatchObject({ id: queued.run_id, session_id: queued.session_id, status: 'cancelled', error: 'cancelled' });
        expect((await cancel(h, queued.run_id)).status).toBe(409);

        // Free the slots, then run one more echo to its end: the cancelled job, ahead of it in
        // the queue, was taken (or dropped) before it.
        for (const filler of fillers) expect((await cancel(h, filler.run_id)).status).toBe(200);
        const later = await startRun(h, { agent_id: 'echo', input: { message: 'later' } });
        await waitRun(h, later.run_id, 'completed', 10_000);

        expect((await call(`${h.url}/api/runs/${queued.run_id}`)).body).toMatchObject({ status: 'cancelled', error: 'cancelled' });
        const events = (await sessionEvents(h, queued.session_id)).filter((e) => e.run_id === queued.run_id);
        expect(events.map(brief)).toEqual(['cancelled']);
        // Only the checkpoint the run was created with.
        expect(await historySeqs(h, queued.session_id)).toEqual([1]);
        expect((await spansOf(h, queued.session_id)).filter((s) => s.parent_id !== '')).toEqual([]);
      },
      TEST_MS,
    );

    it(
      'cancels a run queued behind the active one (multitask: enqueue); it never runs, even once the active one ends',
      async () => {
        const h = harness();
        const session_id = `s-${randomUUID()}`;
        const active = await startRun(h, { agent_id: 'waiter', session_id });
        await waitRun(h, active.run_id, 'running');
        await waitNodeStart(h, session_id, active.run_id, 'wait');

        const behind = await call(`${h.url}/api/runs`, { method: 'POST', json: { agent_id: 'waiter', session_id, multitask: 'enqueue' } });
        expect(behind.status, JSON.stringify(behind.body)).toBe(202);
        expect(behind.body).toMatchObject({ session_id, status: 'queued' });
        const queuedId = behind.body.run_id as string;
        expect((await call(`${h.url}/api/runs/${queuedId}`)).body.status).toBe('queued');

        const cancelled = await cancel(h, queuedId);
        expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
        expect(cancelled.body).toMatchObject({ id: queuedId, session_id, status: 'cancelled', error: 'cancelled' });
        expect((await call(`${h.url}/api/runs/${active.run_id}`)).body.status).toBe('running');

        const stopped = await cancel(h, active.run_id);
        expect(stopped.status, JSON.stringify(stopped.body)).toBe(200);
        expect(stopped.body).toMatchObject({ id: active.run_id, status: 'cancelled' });
        await waitNodeSpan(h, session_id, active.run_id, 'wait', 'cancelled');

        // The session is free (the cancelled run was not promoted to be its active run).
        const next = await call(`${h.url}/api/runs`, { method: 'POST', json: { agent_id: 'waiter', session_id } });
        expect(next.status, JSON.stringify(next.body)).toBe(202);
        await waitNodeStart(h, session_id, next.body.run_id, 'wait');
        expect((await cancel(h, next.body.run_id)).status).toBe(200);
        await waitNodeSpan(h, session_id, next.body.run_id, 'wait', 'cancelled');

        expect((await call(`${h.url}/api/runs/${queuedId}`)).body).toMatchObject({ status: 'cancelled', error: 'cancelled' });
        const events = await sessionEvents(h, session_id);
        const ofQueued = events.filter((e) => e.run_id === queuedId);
        expect(ofQueued.map(brief)).toEqual(['cancelled']);
        expect(ofQueued[0]!.error).toBe('cancelled');
        expect((await spansOf(h, session_id)).filter((s) => s.attributes.run_id === queuedId && s.parent_id !== '')).toEqual([]);
        const runs = (await call(`${h.url}/api/runs?session_id=${session_id}`)).body.runs as { id: string; status: string }[];
        expect(Object.fromEntries(runs.map((r) => [r.id, r.status]))).toEqual({
          [active.run_id]: 'cancelled',
          [queuedId]: 'cancelled',
          [next.body.run_id]: 'cancelled',
        });
      },
      TEST_MS,
    );

    it(
      'cancels a running run at once: its node sees ctx.signal, its span says cancelled, no later checkpoint or node',
      async () => {
        const h = harness();
        const { run_id, session_id } = await startRun(h, { agent_id: 'waiter', input: {} });
        await waitRun(h, run_id, 'running');
        await waitNodeStart(h, session_id, run_id, 'wait');
        const before = await historySeqs(h, session_id);
        const latest = before[0]!;
        expect(latest).toBe(1);

        const t0 = Date.now();
        const response = await cancel(h, run_id);
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        expect(response.body).toMatchObject({ id: run_id, status: 'cancelled', error: 'cancelled' });
        // Stored before the answer: the first read after it says cancelled.
        expect((await call(`${h.url}/api/runs/${run_id}`)).body).toMatchObject({ status: 'cancelled', error: 'cancelled' });

        // The node returned because it saw ctx.signal, not by its own timer: its span ended
        // after the cancel (one machine's clock) and before that timer, armed once the span
        // began, could have run out (a timer never fires early).
        const span = await waitNodeSpan(h, session_id, run_id, 'wait', 'cancelled', 20_000);
        expect(Date.parse(span.end)).toBeGreaterThanOrEqual(t0);
        expect(Date.parse(span.end), 'the node ended by its own timer').toBeLessThan(Date.parse(span.start) + waitNodeMs());
        expect(span.parent_id).toBe(run_id);

        expect(await historySeqs(h, session_id)).toEqual(before);
        expect((await call(`${h.url}/api/sessions/state?session_id=${session_id}`)).body).toMatchObject({ seq_num: latest, node_id: 'wait' });
        const events = (await sessionEvents(h, session_id)).filter((e) => e.run_id === run_id);
        expect(events.some((e) => e.node === 'after')).toBe(false);
        expect(events.some((e) => e.type === 'node_end' && e.status === 'ok')).toBe(false);
        const ends = events.filter((e) => e.type === 'cancelled');
        expect(ends).toHaveLength(1);
        expect(ends[0]!.error).toBe('cancelled');
        expect(events.filter((e) => ['completed', 'failed'].includes(e.type))).toEqual([]);
        const spans = (await spansOf(h, session_id)).filter((s) => s.attributes.run_id === run_id);
        expect(spans.some((s) => s.name === 'after')).toBe(false);
        expect(spans.find((s) => s.span_id === run_id)?.attributes).toMatchObject({ status: 'cancelled', error: 'cancelled' });
        expect((await call(`${h.url}/api/runs/${run_id}`)).body.status).toBe('cancelled');
      },
      TEST_MS,
    );

    it(
      'cancels an interrupted run: its approval is closed (cancelled, off the pending list) and a late answer is 409',
      async () => {
        const h = harness();
        const { run_id, session_id } = await startRun(h, { agent_id: 'human-review', input: {} });
        const paused = await waitRun(h, run_id, 'interrupted');
        const approvalId = paused.approval_id as string;
        expect((await pendingOf(h, run_id)).map((a) => a.id)).toEqual([approvalId]);

        const response = await cancel(h, run_id);
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        expect(response.body).toMatchObject({ id: run_id, status: 'cancelled', error: 'cancelled' });
        expect((await call(`${h.url}/api/runs/${run_id}`)).body.status).toBe('cancelled');
        expect(await pendingOf(h, run_id)).toEqual([]);
        const approval = await h.store.approvals.getApproval(T, approvalId);
        expect(approval).toMatchObject({ id: approvalId, status: 'cancelled', decided_by: 'anonymous' });

        const late = await respond(h, approvalId, true, 'too late');
        expect(late.status, JSON.stringify(late.body)).toBe(409);
        expect(late.body.error.code).toBe('conflict');
        expect((await call(`${h.url}/api/runs/${run_id}`)).body.status).toBe('cancelled');
        expect(await h.store.approvals.getApproval(T, approvalId)).toMatchObject({ status: 'cancelled' });
        const events = (await sessionEvents(h, session_id)).filter((e) => e.run_id === run_id);
        expect(events.filter((e) => e.type === 'cancelled').map((e) => e.error)).toEqual(['cancelled']);
        expect(events.some((e) => e.type === 'approval_decided')).toBe(false);
      },
      TEST_MS,
    );

    it(
      'answers 409 naming the status for a run that already ended, 404 for an unknown run',
      async () => {
        const h = harness();
        const paused = await startRun(h, { agent_id: 'human-review', input: {} });
        await waitRun(h, paused.run_id, 'interrupted');
        expect((await cancel(h, paused.run_id)).status).toBe(200);
        const twice = await cancel(h, paused.run_id);
        expect(twice.status).toBe(409);
        expect(twice.body.error.code).toBe('conflict');
        expect(twice.body.error.message).toContain('cancelled');
        expect(twice.body.error.message).toBe('The run is already cancelled.');

        const echo = await startRun(h, { agent_id: 'echo', input: { message: 'done' } });
        await waitRun(h, echo.run_id, 'completed');
        const ended = await cancel(h, echo.run_id);
        expect(ended.status).toBe(409);
        expect(ended.body.error.code).toBe('conflict');
        expect(ended.body.error.message).toBe('The run is already completed.');
        expect((await call(`${h.url}/api/runs/${echo.run_id}`)).body.status).toBe('completed');

        const unknown = await cancel(h, `no-such-run-${randomUUID()}`);
        expect(unknown.status).toBe(404);
        expect(unknown.body.error.code).toBe('not_found');
      },
      TEST_MS,
    );

    it(
      'cannot cancel a run of another tenant (404); that run stays queued',
      async () => {
        const h = harness();
        const other = 'other-tenant';
        const runId = `r-${randomUUID()}`;
        const created = await h.store.runs.createRun(other, {
          run_id: runId,
          session_id: `s-${randomUUID()}`,
          agent_id: 'echo',
          start: { node_id: 'receive', input: { message: 'not yours' } },
        });
        expect(created.status).toBe('queued');
        try {
          const response = await cancel(h, runId);
          expect(response.status, JSON.stringify(response.body)).toBe(404);
          expect(response.body.error.code).toBe('not_found');
          expect((await call(`${h.url}/api/runs/${runId}`)).status).toBe(404);
          expect(await h.store.runs.getRun(other, runId)).toMatchObject({ id: runId, status: 'queued' });
        } finally {
          // Tidy up: nothing will execute it (no job), so end it here before a reaper finds it.
          await h.store.runs.updateRun(other, runId, { status: 'cancelled', error: 'cancelled', from: ['queued'] });
        }
      },
      TEST_MS,
    );

    it(
      'retries a node per its retry policy: 2 retry spans then ok; with always_fail the run fails after 2 retries and 1 error',
      async () => {
        const h = harness();
        const ok = await startRun(h, { agent_id: 'retrying', input: {} });
        await waitRun(h, ok.run_id, 'completed');
        const state = (await call(`${h.url}/api/sessions/state?session_id=${ok.session_id}`)).body;
        expect(state).toMatchObject({ node_id: '__end__', state: { attempts: 3 } });
        const okSpans = (await spansOf(h, ok.session_id)).filter((s) => s.name === 'work');
        expect(okSpans.filter((s) => s.attributes.status === 'retry').map((s) => [s.attributes.attempt, s.attributes.error])).toEqual([
          [1, 'attempt 1 failed'],
          [2, 'attempt 2 failed'],
        ]);
        expect(okSpans.filter((s) => s.attributes.status === 'ok')).toHaveLength(1);
        expect(okSpans).toHaveLength(3);
        const okEvents = (await sessionEvents(h, ok.session_id)).map(brief);
        expect(okEvents.filter((e) => e === 'node_start:work')).toHaveLength(1);
        expect(okEvents.slice(-2)).toEqual(['node_end:work:ok', 'completed']);
        expect(okEvents).not.toContain('node_end:work:error');

        const bad = await startRun(h, { agent_id: 'retrying', input: { always_fail: true } });
        const failed = await waitRun(h, bad.run_id, 'failed');
        expect(failed.error).toContain('failed for good');
        expect(failed.error).toBe('attempt 3 failed for good');
        const badSpans = (await spansOf(h, bad.session_id)).filter((s) => s.name === 'work');
        expect(badSpans.filter((s) => s.attributes.status === 'retry')).toHaveLength(2);
        expect(badSpans.filter((s) => s.attributes.status === 'error')).toHaveLength(1);
        expect(badSpans).toHaveLength(3);
        const badEvents = (await sessionEventsEndingWith(h, bad.session_id, 'failed')).map(brief);
        expect(badEvents.filter((e) => e === 'node_start:work')).toHaveLength(1);
        expect(badEvents.slice(-2)).toEqual(['node_end:work:error', 'failed']);
        expect(badEvents.filter((e) => e === 'failed')).toHaveLength(1);
      },
      TEST_MS,
    );

    it(
      'fails a run whose node passes its timeoutMs on every attempt',
      async () => {
        const h = harness();
        const { run_id, session_id } = await startRun(h, { agent_id: 'node-timeout', input: {} });
        const failed = await waitRun(h, run_id, 'failed', 10_000);
        expect(failed.error).toMatch(/timed out after 200 ms/);
        const spans = (await spansOf(h, session_id)).filter((s) => s.name === 'stall');
        expect(spans.map((s) => s.attributes.status).sort()).toEqual(['error', 'retry']);
        for (const span of spans) expect(span.attributes.error).toMatch(/timed out after 200 ms/);
        const events = (await sessionEventsEndingWith(h, session_id, 'failed')).filter((e) => e.run_id === run_id);
        expect(events.map(brief).slice(-2)).toEqual(['node_end:stall:error', 'failed']);
        expect(events.filter((e) => e.type === 'failed').map((e) => e.error)).toEqual([failed.error]);
      },
      TEST_MS,
    );
  });
}
