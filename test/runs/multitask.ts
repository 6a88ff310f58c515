import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { MAX_QUEUED_BEHIND, type RunEvent } from '../../src/domain/types.js';
import { eventsOf, openRaw, type RawStream } from '../support/sse.js';
import { call } from '../support/app.js';
import { waitFor } from '../support/wait.js';
import { sessionEvents, startRun, waitRun, type RunHarness } from './scenarios.js';
import { brief } from '../support/events.js';

/** The `error` of a run replaced by a `multitask: "interrupt"` request. */
const INTERRUPTED = 'interrupted by a new run (multitask: interrupt)';
const ACTIVE = ['queued', 'running', 'interrupted'];
/** Statuses of a run that holds its session's execution (a node running or an approval pending). */
const EXECUTING = ['running', 'interrupted'];

interface RunRow {
  id: string;
  session_id: string;
  agent_id: string;
  status: string;
  created_at: string;
  updated_at: string;
  error?: string;
  deadline_at?: string;
  approval_id?: string;
}

const sessionId = () => `mt-${randomUUID()}`;
function postRun(h: RunHarness, body: Record<string, unknown>) {
  return call(`${h.url}/api/runs`, { method: 'POST', json: body });
}

async function getRun(h: RunHarness, runId: string): Promise<RunRow> {
  const response = await call(`${h.url}/api/runs/${runId}`);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body as RunRow;
}

/** The session's runs, newest first (404 → none yet). */
async function listRuns(h: RunHarness, session: string): Promise<RunRow[]> {
  const response = await call(`${h.url}/api/runs?session_id=${session}&limit=500`);
  if (response.status === 404) return [];
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.runs as RunRow[];
}

async function cancel(h: RunHarness, runId: string): Promise<RunRow> {
  const response = await call(`${h.url}/api/runs/${runId}/cancel`, { method: 'POST' });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body as RunRow;
}

/** Cancels whatever is still active on the session (runs queued behind first), so nothing is left waiting 60 s. */
async function cancelActive(h: RunHarness, session: string): Promise<void> {
  for (let round = 0; round < 5; round += 1) {
    const active = (await listRuns(h, session)).filter((r) => ACTIVE.includes(r.status));
    if (active.length === 0) return;
    for (const run of active) await call(`${h.url}/api/runs/${run.id}/cancel`, { method: 'POST' });
  }
}

/** A new session: whatever run of it is still active when the test finishes is cancelled. */
function newSession(h: RunHarness): string {
  const session = sessionId();
  onTestFinished(() => cancelActive(h, session));
  return session;
}

/** A `waiter` run started on the session, once it is running (it holds the session until cancelled). */
async function runningWaiter(h: RunHarness, session: string): Promise<{ run_id: string; session_id: string }> {
  const run = await startRun(h, { agent_id: 'waiter', session_id: session, input: {} });
  await waitRun(h, run.run_id, 'running');
  return run;
}

/**
 * Reads the session's runs over and over until stopped. The list is read newest first, and a
 * run only starts once every older run of the session ended, so one sample can never show two
 * runs executing that were not executing at the same moment.
 */
function sampleStatuses(h: RunHarness, session: string) {
  const samples: Record<string, string>[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const runs = await listRuns(h, session).catch(() => undefined);
      if (runs) samples.push(Object.fromEntries(runs.map((r) => [r.id, r.status])));
      await sleep(10);
    }
  })();
  return {
    samples,
    stop: async () => {
      stopped = true;
      await loop;
    },
    /** Waits until `count` more samples were taken (so the sampler saw the state of now). */
    more: async (count = 3) => {
      const seen = samples.length;
      await waitFor(`${count} more samples`, () => samples.length >= seen + count, 10_000);
    },
    /** The samples in which more than one run had one of `statuses`. */
    overlapping: (statuses: string[]) => samples.filter((s) => Object.values(s).filter((status) => statuses.includes(status)).length > 1),
  };
}

/** Index in `events` of the first event of `runId` matching `label` (brief form), -1 when absent. */
function indexOf(events: RunEvent[], runId: string, label: string): number {
  return events.findIndex((e) => e.run_id === runId && brief(e) === label);
}

/**
 * Multitask (`reject`, `enqueue`, `interrupt`), run deadlines (`timeout_ms`) and custom events
 * (`ctx.emit`, streamed and resumed over SSE), for one harness (Redis + workers, or embedded).
 */
export function runMultitaskScenarios(name: string, harness: () => RunHarness): void {
  describe(`multitask, deadlines and custom events: ${name}`, () => {
    it('rejects a second run on a busy session with 409, by default and with multitask "reject"', async () => {
      const h = harness();
      const session = newSession(h);
      const first = await startRun(h, { agent_id: 'waiter', session_id: session, input: {} });
      // Queued or already running: either way the session is busy.
      const early = await postRun(h, { agent_id: 'waiter', session_id: session, input: {} });
      expect(early.status).toBe(409);
      await waitRun(h, first.run_id, 'running');
      const byDefault = await postRun(h, { agent_id: 'waiter', session_id: session, input: {} });
      expect(byDefault.status).toBe(409);
      expect(byDefault.body.error.code).toBe('conflict');
      const explicit = await postRun(h, { agent_id: 'waiter', session_id: session, input: {}, multitask: 'reject' });
      expect(explicit.status).toBe(409);
      expect(explicit.body.error.code).toBe('conflict');
      // Nothing was created by the refused requests.
      const runs = await listRuns(h, session);
      expect(runs.map((r) => [r.id, r.status])).toEqual([[first.run_id, 'running']]);
      await cancel(h, first.run_id);
      // Once the active run ended, a plain start works again.
      const next = await startRun(h, { agent_id: 'waiter', session_id: session, input: {}, multitask: 'reject' });
      await waitRun(h, next.run_id, 'running');
    });

    it('enqueue: runs wait queued behind the active one and start strictly one after the other, in order', async () => {
      const h = harness();
      const session = newSession(h);
      const a = await runningWaiter(h, session);
      const b = await startRun(h, { agent_id: 'waiter', session_id: session, input: { n: 1 }, multitask: 'enqueue' });
      const c = await startRun(h, { agent_id: 'waiter', session_id: session, input: { n: 2 }, multitask: 'enqueue' });
      expect([b.session_id, c.session_id]).toEqual([session, session]);

      const listed = await listRuns(h, session);
      expect(listed.map((r) => [r.id, r.status])).toEqual([
        [c.run_id, 'queued'],
        [b.run_id, 'queued'],
        [a.run_id, 'running'],
      ]);
      // The queued runs' inputs are not applied while they wait.
      const waiting = (await call(`${h.url}/api/sessions/state?session_id=${session}`)).body;
      expect(waiting.state.n).toBeUndefined();

      expect(await cancel(h, a.run_id)).toMatchObject({ status: 'cancelled', error: 'cancelled' });
      await waitRun(h, b.run_id, 'running');
      expect((await getRun(h, c.run_id)).status).toBe('queued');
      expect((await call(`${h.url}/api/sessions/state?session_id=${session}`)).body).toMatchObject({ node_id: 'wait', state: { n: 1 } });

      await cancel(h, b.run_id);
      await waitRun(h, c.run_id, 'running');
      expect((await call(`${h.url}/api/sessions/state?session_id=${session}`)).body).toMatchObject({ node_id: 'wait', state: { n: 2 } });
      await cancel(h, c.run_id);

      const final = await listRuns(h, session);
      expect(final.map((r) => [r.id, r.status, r.error])).toEqual([
        [c.run_id, 'cancelled', 'cancelled'],
        [b.run_id, 'cancelled', 'cancelled'],
        [a.run_id, 'cancelled', 'cancelled'],
      ]);
      const events = await waitFor('the three cancelled events', async () => {
        const all = await sessionEvents(h, session);
        return all.filter((e) => e.type === 'cancelled').length === 3 ? all : undefined;
      });
      // Each run's node starts only after the previous run's end was published.
      expect(events.filter((e) => brief(e) === 'node_start:wait').map((e) => e.run_id)).toEqual([a.run_id, b.run_id, c.run_id]);
      expect(indexOf(events, b.run_id, 'node_start:wait')).toBeGreaterThan(indexOf(events, a.run_id, 'cancelled'));
      expect(indexOf(events, c.run_id, 'node_start:wait')).toBeGreaterThan(indexOf(events, b.run_id, 'cancelled'));
      // A cancelled run's node result is discarded: `after` never ran, nothing completed.
      expect(events.some((e) => e.node === 'after' || e.type === 'completed')).toBe(false);
    });

    it(`enqueue: at most ${MAX_QUEUED_BEHIND} runs wait behind the active one, then 409`, async () => {
      const h = harness();
      const session = newSession(h);
      const a = await startRun(h, { agent_id: 'waiter', session_id: session, input: {} });
      const queued: string[] = [];
      for (let i = 0; i < MAX_QUEUED_BEHIND; i += 1) {
        queued.push((await startRun(h, { agent_id: 'waiter', session_id: session, input: { i }, multitask: 'enqueue' })).run_id);
      }
      const full = await postRun(h, { agent_id: 'waiter', session_id: session, input: {}, multitask: 'enqueue' });
      expect(full.status).toBe(409);
      expect(full.body.error.code).toBe('conflict');
      const runs = await listRuns(h, session);
      expect(runs).toHaveLength(MAX_QUEUED_BEHIND + 1);
      expect(runs.filter((r) => r.status === 'queued').map((r) => r.id)).toEqual(expect.arrayContaining(queued));
      // A cancelled waiting run leaves the queue: there is room for one more.
      await cancel(h, queued[0]!);
      const another = await startRun(h, { agent_id: 'waiter', session_id: session, input: {}, multitask: 'enqueue' });
      // The active run was never displaced.
      expect((await getRun(h, a.run_id)).status).toMatch(/^(queued|running)$/);
      expect((await getRun(h, another.run_id)).status).toBe('queued');
    });

    it('enqueue: two concurrent requests on a busy session both wait, then run after it one at a time', async () => {
      const h = harness();
      const session = newSession(h);
      // human-review holds its session (interrupted) until its approval is answered.
      const a = await startRun(h, { agent_id: 'human-review', session_id: session, input: { topic: 'a' } });
      const pausedA = await waitRun(h, a.run_id, 'interrupted');
      const sampler = sampleStatuses(h, session);
      onTestFinished(() => sampler.stop());
      const answers = await Promise.all(
        ['b', 'c'].map((topic) => postRun(h, { agent_id: 'human-review', session_id: session, input: { topic }, multitask: 'enqueue' })),
      );
      expect(answers.map((r) => [r.status, r.body.status])).toEqual([
        [202, 'queued'],
        [202, 'queued'],
      ]);
      const ids = answers.map((r) => r.body.run_id as string);
      expect(new Set(ids).size).toBe(2);
      for (const id of ids) expect((await getRun(h, id)).status).toBe('queued');

      const approve = async (approvalId: string) => {
        const answer = await call(`${h.url}/api/approval/respond`, { method: 'POST', json: { id: approvalId, approved: true } });
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      };
      await sampler.more();
      await approve(pausedA.approval_id);
      await waitRun(h, a.run_id, 'completed');
      await sampler.more();
      const first = await waitFor('one of the queued runs to reach its approval', async () => {
        for (const id of ids) if ((await getRun(h, id)).status === 'interrupted') return id;
        return undefined;
      });
      const second = ids.find((id) => id !== first)!;
      expect((await getRun(h, second)).status).toBe('queued');
      await approve((await getRun(h, first)).approval_id!);
      await waitRun(h, first, 'completed');
      await sampler.more();
      const pausedSecond = await waitRun(h, second, 'interrupted');
      await sampler.more();
      await approve(pausedSecond.approval_id);
      await waitRun(h, second, 'completed');
      await sampler.more();
      await sampler.stop();

      expect(sampler.overlapping(EXECUTING)).toEqual([]);
      const [firstRun, secondRun] = [await getRun(h, first), await getRun(h, second)];
      // In the order they were queued.
      expect(Date.parse(firstRun.created_at)).toBeLessThanOrEqual(Date.parse(secondRun.created_at));
      const events = await waitFor('three completed events', async () => {
        const all = await sessionEvents(h, session);
        return all.filter((e) => e.type === 'completed').length === 3 ? all : undefined;
      });
      expect(events.filter((e) => brief(e) === 'node_start:draft').map((e) => e.run_id)).toEqual([a.run_id, first, second]);
      expect(indexOf(events, first, 'node_start:draft')).toBeGreaterThan(indexOf(events, a.run_id, 'completed'));
      expect(indexOf(events, second, 'node_start:draft')).toBeGreaterThan(indexOf(events, first, 'completed'));
      const state = (await call(`${h.url}/api/sessions/state?session_id=${session}`)).body;
      expect(state).toMatchObject({ node_id: '__end__', state: { outcome: 'published' } });
    });

    it('interrupt: cancels the active run (its error says why) and starts the new one', async () => {
      const h = harness();
      const session = newSession(h);
      const old = await runningWaiter(h, session);
      const fresh = await startRun(h, { agent_id: 'waiter', session_id: session, input: { n: 1 }, multitask: 'interrupt' });
      expect(fresh.session_id).toBe(session);
      expect(fresh.run_id).not.toBe(old.run_id);
      const cancelled = await getRun(h, old.run_id);
      expect(cancelled).toMatchObject({ status: 'cancelled', error: INTERRUPTED });
      await waitRun(h, fresh.run_id, 'running');
      expect((await call(`${h.url}/api/sessions/state?session_id=${session}`)).body.state).toMatchObject({ n: 1 });
      const events = await waitFor('the new run to start its node', async () => {
        const all = await sessionEvents(h, session);
        return indexOf(all, fresh.run_id, 'node_start:wait') >= 0 ? all : undefined;
      });
      const ends = events.filter((e) => e.run_id === old.run_id && e.type === 'cancelled');
      expect(ends).toEqual([expect.objectContaining({ error: INTERRUPTED })]);
      expect(events.some((e) => e.run_id === old.run_id && (e.node === 'after' || e.type === 'completed'))).toBe(false);
      // An interrupt on an idle session just starts the run.
      await cancel(h, fresh.run_id);
      const idle = await startRun(h, { agent_id: 'waiter', session_id: session, input: {}, multitask: 'interrupt' });
      await waitRun(h, idle.run_id, 'running');
      expect((await getRun(h, fresh.run_id)).error).toBe('cancelled');
    });

    it('interrupt: cancels the runs queued behind the active one too (none of them starts), then starts', async () => {
      const h = harness();
      const session = newSession(h);
      const old = await runningWaiter(h, session);
      const waiting: string[] = [];
      for (let n = 0; n < 5; n += 1) waiting.push((await startRun(h, { agent_id: 'waiter', session_id: session, input: { n }, multitask: 'enqueue' })).run_id);
      const fresh = await startRun(h, { agent_id: 'waiter', session_id: session, input: { n: 'fresh' }, multitask: 'interrupt' });
      await waitRun(h, fresh.run_id, 'running');
      for (const id of [old.run_id, ...waiting]) expect(await getRun(h, id)).toMatchObject({ status: 'cancelled', error: INTERRUPTED });
      const events = await sessionEvents(h, session);
      expect(events.filter((e) => waiting.includes(e.run_id)).map((e) => e.type)).toEqual(waiting.map(() => 'cancelled'));
      expect((await call(`${h.url}/api/sessions/state?session_id=${session}`)).body.state).toMatchObject({ n: 'fresh' });
    });

    it('interrupt: of two concurrent requests both are accepted, one runs and every other run is cancelled', async () => {
      const h = harness();
      const session = newSession(h);
      const old = await runningWaiter(h, session);
      const sampler = sampleStatuses(h, session);
      onTestFinished(() => sampler.stop());
      const answers = await Promise.all(
        [1, 2].map((n) => postRun(h, { agent_id: 'waiter', session_id: session, input: { n }, multitask: 'interrupt' })),
      );
      expect(answers.map((r) => [r.status, r.body.status])).toEqual([
        [202, 'queued'],
        [202, 'queued'],
      ]);
      const ids = answers.map((r) => r.body.run_id as string);
      const settled = await waitFor('one new run running, every other run cancelled', async () => {
        const runs = await listRuns(h, session);
        const running = runs.filter((r) => r.status === 'running');
        const others = runs.filter((r) => r.status !== 'running');
        return running.length === 1 && others.every((r) => r.status === 'cancelled') ? runs : undefined;
      });
      // Let the sampler watch the settled session a little longer: nothing else starts.
      await sampler.more(5);
      await sampler.stop();

      expect(settled.map((r) => r.id).sort()).toEqual([old.run_id, ...ids].sort());
      const winner = settled.find((r) => r.status === 'running')!;
      expect(ids).toContain(winner.id);
      const loser = settled.find((r) => r.id !== winner.id && r.id !== old.run_id)!;
      expect(loser).toMatchObject({ status: 'cancelled', error: INTERRUPTED });
      expect(settled.find((r) => r.id === old.run_id)).toMatchObject({ status: 'cancelled', error: INTERRUPTED });
      // The later run wins: the loser was created (and replaced) first.
      expect(Date.parse(winner.created_at)).toBeGreaterThanOrEqual(Date.parse(loser.created_at));
      expect(sampler.overlapping(['running'])).toEqual([]);
      expect(sampler.overlapping(ACTIVE)).toEqual([]);
      const final = await listRuns(h, session);
      expect(final.filter((r) => ACTIVE.includes(r.status)).map((r) => r.id)).toEqual([winner.id]);
      const events = await sessionEvents(h, session);
      expect(events.filter((e) => e.type === 'cancelled').map((e) => e.run_id).sort()).toEqual([old.run_id, loser.id].sort());
      expect(events.some((e) => e.type === 'completed' || e.node === 'after')).toBe(false);
    });

    it('timeout_ms: a run still active past its deadline is cancelled with error "timeout"', async () => {
      const h = harness();
      const session = newSession(h);
      // Long enough for a worker on a busy machine to take the run before its deadline.
      const timeoutMs = 5_000;
      const asked = Date.now();
      const { run_id } = await startRun(h, { agent_id: 'waiter', session_id: session, input: {}, timeout_ms: timeoutMs });
      const answered = Date.now();
      const started = await getRun(h, run_id);
      expect(started.deadline_at).toEqual(expect.any(String));
      const deadline = Date.parse(started.deadline_at!);
      // timeout_ms from the request's clock (the API's, this process's), read while the request
      // was under way, just before the store stamps created_at.
      expect(deadline).toBeGreaterThanOrEqual(asked + timeoutMs);
      expect(deadline).toBeLessThanOrEqual(answered + timeoutMs);
      expect(deadline).toBeLessThanOrEqual(Date.parse(started.created_at) + timeoutMs);
      // It ran: its node started (an event that stays, where the `running` status lasts only
      // until the deadline and a poll on a busy machine can miss it), and it never finished.
      await waitFor('the node of the run to start', async () => (await sessionEvents(h, session)).some((e) => e.run_id === run_id && e.type === 'node_start' && e.node === 'wait'));
      const ended = await waitRun(h, run_id, 'cancelled', 40_000);
      expect(ended).toMatchObject({ status: 'cancelled', error: 'timeout', deadline_at: started.deadline_at });
      // Not before its deadline; and by the deadline, not by its node's own timer, which would
      // have run it on to `after` and completed it (checked below).
      expect(Date.parse(ended.updated_at)).toBeGreaterThanOrEqual(deadline);
      const events = await waitFor('the cancelled event', async () => {
        const all = await sessionEvents(h, session);
        return all.some((e) => e.type === 'cancelled') ? all : undefined;
      });
      expect(events.filter((e) => e.type === 'cancelled')).toEqual([expect.objectContaining({ run_id, error: 'timeout', agent_id: 'waiter' })]);
      expect(events.some((e) => e.node === 'after' || e.type === 'completed')).toBe(false);
      // Without timeout_ms (and RUN_TIMEOUT_MS 0) a run has no deadline.
      const plain = await startRun(h, { agent_id: 'waiter', session_id: session, input: {} });
      expect((await getRun(h, plain.run_id)).deadline_at).toBeUndefined();
      await cancel(h, plain.run_id);
    }, 120_000);

    it('timeout_ms: a run that completes before its deadline drops its deadline timer at once', async () => {
      const h = harness();
      const hour = 3_600_000;
      const { run_id } = await startRun(h, { agent_id: 'human-review', input: { topic: 'in time' }, timeout_ms: hour });
      const timerOf = async () => (await h.store.timers.due(Date.now() + 2 * hour, 100_000)).filter((t) => t.kind === 'run' && t.id === run_id);
      // Paused for an answer: its deadline is a timer.
      const paused = await waitRun(h, run_id, 'interrupted');
      expect(await timerOf()).toHaveLength(1);
      const answer = await call(`${h.url}/api/approval/respond`, { method: 'POST', json: { id: paused.approval_id, approved: true } });
      expect(answer.status).toBe(200);
      const done = await waitRun(h, run_id, 'completed');
      expect(done.deadline_at).toEqual(expect.any(String));
      // Gone with the run's end, not an hour later when the sweep would find it due.
      await waitFor('the deadline timer of the completed run to be gone', async () => (await timerOf()).length === 0, 15_000);
    });

    it('timeout_ms: a run waiting behind the active one times out where it waits and never starts', async () => {
      const h = harness();
      const session = newSession(h);
      const a = await runningWaiter(h, session);
      const b = await startRun(h, { agent_id: 'waiter', session_id: session, input: {}, multitask: 'enqueue', timeout_ms: 1000 });
      const timedOut = await waitRun(h, b.run_id, 'cancelled', 30_000);
      expect(timedOut.error).toBe('timeout');
      expect((await getRun(h, a.run_id)).status).toBe('running');
      await cancel(h, a.run_id);
      // The session is idle afterwards: nothing was left queued to promote.
      await runningWaiter(h, session);
      const events = await sessionEvents(h, session);
      expect(events.some((e) => e.run_id === b.run_id && e.type === 'node_start')).toBe(false);
      expect(events.filter((e) => e.run_id === b.run_id).map((e) => [e.type, e.error])).toEqual([['cancelled', 'timeout']]);
    });

    it('refuses a bad timeout_ms or multitask with 400 bad_request, creating nothing', async () => {
      const h = harness();
      const bad: Record<string, unknown>[] = [{ timeout_ms: 0 }, { timeout_ms: -1 }, { timeout_ms: 'x' }, { timeout_ms: 1.5 }, { multitask: 'sometimes' }];
      for (const extra of bad) {
        const session = sessionId();
        const response = await postRun(h, { agent_id: 'waiter', session_id: session, input: {}, ...extra });
        expect(response.status, JSON.stringify(extra)).toBe(400);
        expect(response.body.error.code).toBe('bad_request');
        expect((await call(`${h.url}/api/runs?session_id=${session}`)).status).toBe(404);
        expect((await call(`${h.url}/api/sessions/state?session_id=${session}`)).status).toBe(404);
      }
    });

    it('streams ctx.emit custom events over SSE in order, and resumes after one with Last-Event-ID', async () => {
      const h = harness();
      const session = newSession(h);
      const streams: RawStream[] = [];
      onTestFinished(() => streams.forEach((s) => s.destroy()));
      const open = async (query: string, headers: Record<string, string> = {}) => {
        const stream = await openRaw(`${h.url}/api/events/stream?session=${session}${query}`, headers);
        streams.push(stream);
        expect(stream.status).toBe(200);
        await stream.waitForFrames((f) => f.some((frame) => frame.retry !== undefined), 'the retry line');
        return stream;
      };
      const live = await open('');
      const words = ['alpha', 'beta', 'gamma', 'delta'];
      const { run_id } = await startRun(h, { agent_id: 'stream-words', session_id: session, input: { text: words.join(' '), delay_ms: 50 } });
      await live.waitForFrames((f) => eventsOf(f).some((e) => e.event.type === 'completed'), 'the completed event', 20_000);
      await waitRun(h, run_id, 'completed');
      const received = eventsOf(live.frames);
      expect(received.map((r) => brief(r.event))).toEqual(['node_start:speak', 'custom:speak', 'custom:speak', 'custom:speak', 'custom:speak', 'node_end:speak:ok', 'completed']);
      const customs = received.filter((r) => r.event.type === 'custom');
      expect(customs.map((r) => r.event)).toEqual(
        words.map((word, index) => ({
          type: 'custom',
          node: 'speak',
          name: 'token',
          data: { index, word },
          session,
          run_id,
          agent_id: 'stream-words',
          ts: expect.any(String),
        })),
      );
      expect(received.every((r) => r.event.session === session && r.event.run_id === run_id)).toBe(true);
      const ids = received.map((r) => r.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect((await call(`${h.url}/api/sessions/state?session_id=${session}`)).body).toMatchObject({ node_id: '__end__', state: { words: 4 } });
      // What the bus retains is what the stream delivered.
      expect((await sessionEvents(h, session)).map(brief)).toEqual(received.map((r) => brief(r.event)));

      const after = customs[1]!.id;
      const expected = received.slice(received.findIndex((r) => r.id === after) + 1);
      expect(expected.map((r) => brief(r.event))).toEqual(['custom:speak', 'custom:speak', 'node_end:speak:ok', 'completed']);
      for (const resumed of [await open('', { 'Last-Event-ID': after }), await open(`&last_event_id=${after}`)]) {
        await resumed.waitForFrames((f) => eventsOf(f).length >= expected.length, 'the replayed events');
        expect(eventsOf(resumed.frames)).toEqual(expected);
      }
      // Nothing more arrives on either: no duplicates behind the replay.
      const marker = await startRun(h, { agent_id: 'stream-words', session_id: session, input: { text: 'omega' } });
      await waitRun(h, marker.run_id, 'completed');
      for (const resumed of streams.slice(1)) {
        await resumed.waitForFrames((f) => eventsOf(f).some((e) => e.event.run_id === marker.run_id && e.event.type === 'completed'), 'the marker run');
        const got = eventsOf(resumed.frames);
        expect(got.slice(0, expected.length)).toEqual(expected);
        expect(got.slice(expected.length).every((e) => e.event.run_id === marker.run_id)).toBe(true);
        expect(new Set(got.map((e) => e.id)).size).toBe(got.length);
      }
    });
  });
}
