import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUNS_QUEUE } from '../../src/adapters/redis/run-queue.js';
import type { Approval, RunEvent } from '../../src/domain/types.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import agents from '../fixtures/agents.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import type { AgentProcess, LogLine } from '../support/processes.js';
import { freePort, type PrivateRedis, startPrivateRedis, usePrivateRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { useApiWithWorkers } from '../support/workers.js';
import { harnessOf, startRunWorker } from './backends.js';
import { sessionEvents, startRun, waitRun, type RunHarness } from './scenarios.js';
import { brief } from '../support/events.js';

/**
 * "Nothing stays `running` without a job" (README, Run lifecycle), with real worker processes
 * on a private Redis: a job whose only attempt fails in a Redis outage, a job whose workers are
 * SIGKILLed more often than WORKER_MAX_STALLS, a run whose job was deleted (the reaper), and
 * approvals that expire in real time with two workers racing to decide them.
 *
 * Each test has its own API (its own key prefix, so BullMQ queue, reaper lease and timers are
 * its own) and stops the worker processes it started.
 */

const T = 'DefaultTenant';
const JOB_FAILED = "The run's job failed for good: ";

/** A pino line with this message (and this run_id, when given). */
function logged(msg: string, runId?: string): (line: LogLine) => boolean {
  return (line) => line.json?.msg === msg && (runId === undefined || line.json.run_id === runId);
}

async function runEvents(h: RunHarness, sessionId: string, runId: string): Promise<RunEvent[]> {
  return (await sessionEvents(h, sessionId)).filter((e) => e.run_id === runId);
}

async function waitNodeStarts(h: RunHarness, sessionId: string, runId: string, node: string, count: number, timeoutMs = 15_000): Promise<void> {
  await waitFor(
    `${count} node_start ${node} of run ${runId}`,
    async () => (await runEvents(h, sessionId, runId)).filter((e) => e.type === 'node_start' && e.node === node).length >= count,
    timeoutMs,
  );
}

/**
 * Starts a worker with `env` and a `slow` run, and SIGKILLs the worker once the run's `crawl`
 * node is under way: the run is left `running`, its job active under a dead worker's lock.
 */
async function killedMidNode(redisUrl: string, app: TestApi, env: Record<string, string>): Promise<{ h: RunHarness; run_id: string; session_id: string }> {
  const h = harnessOf(app);
  const a = await startRunWorker(redisUrl, app, env);
  const { run_id, session_id } = await startRun(h, { agent_id: 'slow', input: {} });
  await waitNodeStarts(h, session_id, run_id, 'crawl', 1);
  expect((await call(`${app.url}/api/runs/${run_id}`)).body.status).toBe('running');
  a.signal('SIGKILL');
  expect(await a.exited).toBeNull();
  return { h, run_id, session_id };
}

/**
 * A private Redis and an API whose run jobs get `attempts` tries (set by whoever enqueues: the
 * API for a start job). `stallDuringStep` starts a worker and a `slow` run, and stalls Redis
 * (SIGSTOP) while the node's step is written: the node ends ~1.5 s after its node_start, its
 * write times out after 1 s (the store's command timeout) and the attempt fails; Redis stays
 * stopped ~4 s in all. The worker's lock outlasts the stall, so the job fails by its attempt,
 * never by a stall.
 */
function withStalledStep(attempts: number) {
  let redis: PrivateRedis;
  let app: TestApi;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    app = await startTestApi({ redisUrl: redis.url, agents: new AgentRegistry(agents), env: { RUN_JOB_ATTEMPTS: String(attempts) } });
  });
  afterAll(async () => {
    redis?.resume();
    await app?.close();
    await redis?.stop();
  });
  return {
    app: () => app,
    async stallDuringStep(): Promise<{ h: RunHarness; worker: AgentProcess; run_id: string; session_id: string }> {
      const h = harnessOf(app);
      const worker = await startRunWorker(redis.url, app, { RUN_JOB_ATTEMPTS: String(attempts), SLOW_NODE_MS: '1500', WORKER_STALLED_INTERVAL_MS: '10000' });
      try {
        const { run_id, session_id } = await startRun(h, { agent_id: 'slow', input: { n: 1 } });
        await waitNodeStarts(h, session_id, run_id, 'crawl', 1);
        const pausedAt = Date.now();
        redis.pause();
        try {
          await worker.waitForLine(logged('run job failed; the queue retries it', run_id), 6_000);
        } finally {
          await new Promise((r) => setTimeout(r, Math.max(0, 4_000 - (Date.now() - pausedAt))));
          redis.resume();
        }
        return { h, worker, run_id, session_id };
      } catch (error) {
        await worker.stop();
        throw error;
      }
    },
  };
}

describe('a run job whose only attempt fails in a Redis outage (RUN_JOB_ATTEMPTS=1)', () => {
  const setup = withStalledStep(1);

  it('ends the run failed with a failed event once Redis is back; the session takes a new run', async () => {
    const { h, worker, run_id, session_id } = await setup.stallDuringStep();
    try {
      const run = await waitRun(h, run_id, 'failed', 20_000);
      expect(run.error).toMatch(/^The run's job failed for good: /);
      expect(run.error).toBe(`${JOB_FAILED}Storage is unreachable; retry shortly.`);
      await worker.waitForLine(logged('run ended: the queue gave up on its job', run_id), 5_000);

      const failed = await waitFor('the failed event', async () => {
        const events = await runEvents(h, session_id, run_id);
        const ends = events.filter((e) => e.type === 'failed');
        return ends.length > 0 ? ends : undefined;
      });
      expect(failed).toHaveLength(1);
      expect(failed[0]!.error).toBe(run.error);
      const types = (await runEvents(h, session_id, run_id)).map(brief);
      expect(types.filter((t) => t === 'completed')).toEqual([]);
      expect(types.at(-1)).toBe('failed');
      // Nobody executes it again (one attempt): crawl started once.
      expect(types.filter((t) => t === 'node_start:crawl')).toHaveLength(1);

      // The session is free: a new run on it is accepted and (Redis healthy) completes.
      const again = await call(`${setup.app().url}/api/runs`, { method: 'POST', json: { agent_id: 'slow', session_id, input: { n: 2 } } });
      expect(again.status, JSON.stringify(again.body)).toBe(202);
      expect(again.body).toMatchObject({ session_id, status: 'queued' });
      expect(again.body.run_id).not.toBe(run_id);
      await waitRun(h, again.body.run_id, 'completed', 20_000);
    } finally {
      expect(await worker.stop()).toBe(0);
    }
  });
});

describe('a run job retried after a Redis stall (RUN_JOB_ATTEMPTS=2)', () => {
  const setup = withStalledStep(2);

  it('finds the write that timed out in the stall landed once Redis resumed: the run completed, its node ran once', async () => {
    // The node's step (its checkpoint and the run's completion, one script) was sent to the
    // stalled Redis: the client gave up and the attempt failed, but Redis ran the script when
    // it resumed, before the retry.
    const { h, worker, run_id, session_id } = await setup.stallDuringStep();
    try {
      const run = await waitRun(h, run_id, 'completed', 20_000);
      expect(run.error).toBeUndefined();
      // The retry (the second attempt) took the job and found the run ended: no second execution.
      await waitFor('the retry', async () => worker.lines.filter(logged('run job started', run_id)).length === 2);
      await worker.waitForLine(logged('run job ended', run_id), 5_000);
      const types = (await runEvents(h, session_id, run_id)).map(brief);
      // Each node ended once (a retry announces the node it takes up again with a node_start).
      expect(types.filter((t) => t === 'node_start:crawl')).toHaveLength(1);
      const starts = [...new Set(types.filter((t) => t.startsWith('node_start:')))];
      const ends = types.filter((t) => t.startsWith('node_end:'));
      expect(ends).toEqual(starts.map((t) => `${t.replace('node_start:', 'node_end:')}:ok`));
      expect(types.filter((t) => t === 'completed')).toHaveLength(1);
      expect(types.filter((t) => t === 'failed')).toEqual([]);
      // One checkpoint per step, consecutive: none written twice.
      const seqs = (await call(`${setup.app().url}/api/sessions/history?session_id=${session_id}`)).body.checkpoints.map((c: { seq_num: number }) => c.seq_num);
      expect(seqs).toEqual(Array.from({ length: starts.length + 1 }, (_, i) => starts.length + 1 - i));
    } finally {
      expect(await worker.stop()).toBe(0);
    }
  });
});

describe('with one private Redis', () => {
  const redis = usePrivateRedis();

  describe('a run job whose workers are SIGKILLed more often than WORKER_MAX_STALLS', () => {
    let app: TestApi;
    beforeAll(async () => {
      app = await startTestApi({ redisUrl: redis.url, agents: new AgentRegistry(agents) });
    });
    afterAll(async () => {
      await app?.close();
    });

    it('is failed by BullMQ (stalled more than allowable limit) and the run ends failed', async () => {
      const env = { WORKER_MAX_STALLS: '1', WORKER_STALLED_INTERVAL_MS: '1000', SLOW_NODE_MS: '60000' };
      const { h, run_id, session_id } = await killedMidNode(redis.url, app, env);

      // Stall 1 (≤ WORKER_MAX_STALLS): B takes the job over and starts crawl again.
      const b = await startRunWorker(redis.url, app, env);
      await waitNodeStarts(h, session_id, run_id, 'crawl', 2);
      b.signal('SIGKILL');
      expect(await b.exited).toBeNull();

      // Stall 2 (> WORKER_MAX_STALLS): C gets the job only to fail it.
      const c = await startRunWorker(redis.url, app, env);
      try {
        const run = await waitRun(h, run_id, 'failed', 20_000);
        expect(run.error).toMatch(/stalled/);
        expect(run.error).toBe(`${JOB_FAILED}job stalled more than allowable limit`);
        await c.waitForLine(logged('run ended: the queue gave up on its job', run_id), 5_000);
        const events = await waitFor('the failed event', async () => {
          const all = await runEvents(h, session_id, run_id);
          return all.some((e) => e.type === 'failed') ? all : undefined;
        });
        const types = events.map(brief);
        expect(types.filter((t) => t === 'failed')).toHaveLength(1);
        expect(events.find((e) => e.type === 'failed')!.error).toBe(run.error);
        // C never executed the node: only A's and B's node_start.
        expect(types.filter((t) => t === 'node_start:crawl')).toHaveLength(2);
        expect(types.at(-1)).toBe('failed');
        // Nothing stays running.
        const active = await app.backend.store.runs.listActiveRuns(Date.now(), 1_000);
        expect(active.filter((r) => r.run.id === run_id)).toEqual([]);
        expect((await call(`${app.url}/api/runs/${run_id}`)).body.status).toBe('failed');
      } finally {
        expect(await c.stop()).toBe(0);
      }
    });
  });

  describe('the reaper (RUN_REAPER_INTERVAL_MS=1000)', () => {
    let app: TestApi;
    beforeAll(async () => {
      app = await startTestApi({ redisUrl: redis.url, agents: new AgentRegistry(agents) });
    });
    afterAll(async () => {
      await app?.close();
    });

    /**
     * Deletes the run's start job by hand where it is (docs/concepts/run-lifecycle.md): waiting
     * for a worker slot, its entry in the admission's jobs hash; in BullMQ, the job (an active
     * job's lock first).
     */
    async function deleteStartJob(runId: string, state: 'waiting for a slot' | 'active'): Promise<void> {
      const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
      const queue = new Queue(RUNS_QUEUE, { connection, prefix: app.config.SERVICE_KEY_PREFIX });
      const jobId = `start.${runId}`;
      try {
        if (state === 'waiting for a slot') {
          expect(await queue.getJobState(jobId)).toBe('unknown');
          expect(await connection.hdel(`${app.config.SERVICE_KEY_PREFIX}:admission:jobs`, jobId)).toBe(1);
          return;
        }
        expect(await queue.getJobState(jobId)).toBe(state);
        expect(await connection.del(`${queue.toKey(jobId)}:lock`)).toBe(1);
        expect(await queue.remove(jobId)).toBe(1);
        expect(await queue.getJobState(jobId)).toBe('unknown');
      } finally {
        await queue.close();
        connection.disconnect();
      }
    }

    /** Waits for `worker`'s reaper to end the run failed; checks its log line; resolves with the run's events. */
    async function reaped(h: RunHarness, worker: AgentProcess, ids: { run_id: string; session_id: string }, was: string, timeoutMs: number): Promise<RunEvent[]> {
      const { run_id, session_id } = ids;
      const run = await waitRun(h, run_id, 'failed', timeoutMs);
      expect(run.error).toBe(`The run was ${was} with no job left to execute it; ended by the reaper.`);
      const line = await worker.waitForLine(logged('reaper ended a stuck run', run_id), 5_000);
      expect(line.json).toMatchObject({ run_id, tenant: T, was, level: 40 });
      const events = await waitFor('the failed event', async () => {
        const all = await runEvents(h, session_id, run_id);
        return all.some((e) => e.type === 'failed') ? all : undefined;
      });
      expect(events.at(-1)!.error).toBe(run.error);
      return events;
    }

    it('ends a queued run whose job was deleted by hand, logs it, and counts it in agentplane_runs_stuck', async () => {
      const h = harnessOf(app);
      // No worker yet: the run stays queued with its start job waiting for a worker slot.
      const { run_id, session_id } = await startRun(h, { agent_id: 'echo', input: { message: 'lost' } });
      await deleteStartJob(run_id, 'waiting for a slot');
      expect((await call(`${app.url}/api/runs/${run_id}`)).body.status).toBe('queued');

      // Every value the gauge takes, read from before the worker listens until the test ends.
      const port = await freePort();
      const seen: number[] = [];
      let polling = true;
      const poller = (async () => {
        while (polling) {
          try {
            const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(1_000) })).text();
            const match = /^agentplane_runs_stuck (\d+)$/m.exec(text);
            if (match && seen.at(-1) !== Number(match[1])) seen.push(Number(match[1]));
          } catch {
            // Not listening yet.
          }
          await new Promise((r) => setTimeout(r, 10));
        }
      })();

      const startedAt = Date.now();
      const worker = await startRunWorker(redis.url, app, { RUN_REAPER_INTERVAL_MS: '1000' }, port);
      try {
        const events = await reaped(h, worker, { run_id, session_id }, 'queued', 10_000);
        expect(events.map(brief)).toEqual(['failed']);
        // The pass that ended it found 1; a later pass finds none.
        await waitFor('agentplane_runs_stuck 1, then 0', () => seen.indexOf(1) >= 0 && seen.lastIndexOf(0) > seen.indexOf(1), 10_000);
        expect(worker.lines.filter((l) => logged('reaper ended a stuck run')(l))).toHaveLength(1);
        console.info(`reaper: run failed ${Date.now() - startedAt} ms after the worker was spawned; gauge values seen ${JSON.stringify(seen)}`);
      } finally {
        polling = false;
        await poller;
        expect(await worker.stop()).toBe(0);
      }
    });

    it('ends a running run whose worker was SIGKILLed and whose job was then deleted by hand; its node never runs again', async () => {
      // Both workers reap every second (a killed worker's reaper lease lapses within one interval).
      const env = { RUN_REAPER_INTERVAL_MS: '1000', SLOW_NODE_MS: '60000' };
      const { h, run_id, session_id } = await killedMidNode(redis.url, app, env);
      // The job is still active under the dead worker's lock: an operator drops the lock and the job.
      await deleteStartJob(run_id, 'active');
      const checkpoints = async () => (await call(`${app.url}/api/sessions/history?session_id=${session_id}`)).body.checkpoints.length as number;
      const before = await checkpoints();

      const b = await startRunWorker(redis.url, app, env);
      try {
        const events = await reaped(h, b, { run_id, session_id }, 'running', 15_000);
        // The node started once, on the killed worker; nothing ran it again, no checkpoint was added.
        expect(events.map(brief)).toEqual(['node_start:before', 'node_end:before:ok', 'node_start:crawl', 'failed']);
        expect(await checkpoints()).toBe(before);
        const active = await app.backend.store.runs.listActiveRuns(Date.now(), 1_000);
        expect(active.filter((r) => r.run.id === run_id)).toEqual([]);
      } finally {
        expect(await b.stop()).toBe(0);
      }
    });
  });

  describe('approvals expiring in real time with two worker processes', () => {
    const stack = useApiWithWorkers(() => redis.url);

    /** Starts `expiring`, waits for its pending approval (with expires_at), and returns both. */
    async function expiringRun(input: Record<string, unknown>): Promise<{ run_id: string; session_id: string; approval: Approval }> {
      const h = harnessOf(stack.app);
      const startedAt = Date.now();
      const { run_id, session_id } = await startRun(h, { agent_id: 'expiring', input });
      const approval = await waitFor(`the pending approval of ${run_id}`, async () => {
        const pending = (await call(`${stack.app.url}/api/approval/pending?limit=500`)).body.pending as Approval[];
        return pending.find((a) => a.run_id === run_id);
      });
      expect(approval).toMatchObject({ session_id, prompt: 'Proceed?', node_id: 'ask', status: 'pending', on_timeout: input.on_timeout ?? 'reject' });
      const expiresAt = Date.parse(approval.expires_at!);
      // expires_at and requested_at are two reads of the clock, a millisecond apart at most.
      expect(expiresAt - Date.parse(approval.requested_at)).toBeGreaterThanOrEqual((input.expires_in_ms as number) - 5);
      expect(expiresAt - Date.parse(approval.requested_at)).toBeLessThanOrEqual(input.expires_in_ms as number);
      expect(expiresAt).toBeGreaterThan(startedAt);
      const run = (await call(`${stack.app.url}/api/runs/${run_id}`)).body;
      expect(run).toMatchObject({ status: 'interrupted', approval_id: approval.id });
      return { run_id, session_id, approval };
    }

    /** Once the approval's timer is gone no sweeper can decide it again: then its decisions are final. */
    async function decisions(sessionId: string, approvalId: string): Promise<RunEvent[]> {
      await waitFor(`the timer of ${approvalId} to be cleared`, async () =>
        (await stack.app.backend.store.timers.due(Number.MAX_SAFE_INTEGER, 1_000)).every((t) => t.id !== approvalId),
      );
      return (await sessionEvents(harnessOf(stack.app), sessionId)).filter((e) => e.type === 'approval_decided' && e.approval_id === approvalId);
    }

    it('on_timeout reject (the default): decided once by timeout, the run completes with approved:false; a late answer is 409', async () => {
      const { run_id, session_id, approval } = await expiringRun({ expires_in_ms: 1_500 });
      await waitRun(harnessOf(stack.app), run_id, 'completed', 15_000);
      const state = (await call(`${stack.app.url}/api/sessions/state?session_id=${session_id}`)).body;
      expect(state).toMatchObject({ node_id: '__end__', state: { approved: false, comment: 'expired' } });
      const decided = await decisions(session_id, approval.id);
      expect(decided).toHaveLength(1);
      expect(decided[0]).toMatchObject({ run_id, approval_id: approval.id, by: 'timeout', approved: false });
      const record = await stack.app.backend.store.approvals.getApproval(T, approval.id);
      expect(record).toMatchObject({ status: 'rejected', decided_by: 'timeout', comment: 'expired' });
      const lateByMs = Date.parse(record!.decided_at!) - Date.parse(approval.expires_at!);
      // Sweeps run every second on each worker: decided at expires_at, never before it (the
      // run's 15 s wait above bounds how late).
      expect(lateByMs).toBeGreaterThanOrEqual(0);
      expect((await call(`${stack.app.url}/api/approval/pending?limit=500`)).body.pending.some((a: Approval) => a.id === approval.id)).toBe(false);
      const late = await call(`${stack.app.url}/api/approval/respond`, { method: 'POST', json: { id: approval.id, approved: true } });
      expect(late.status).toBe(409);
      expect(late.body.error.code).toBe('conflict');
      const types = (await runEvents(harnessOf(stack.app), session_id, run_id)).map(brief);
      expect(types.filter((t) => t === 'completed')).toHaveLength(1);
      expect(types.indexOf('approval_decided')).toBeGreaterThan(types.indexOf('interrupted:ask'));
      // Exactly one of the two workers decided it.
      const deciders = stack.workers.filter((w) => w.lines.some((l) => l.json?.msg === 'approval expired: decided by timeout' && l.json.approval_id === approval.id));
      expect(deciders).toHaveLength(1);
      console.info(`expiry (reject): decided ${lateByMs} ms after expires_at`);
    });

    it('on_timeout fail: the run ends failed, with one approval_decided by timeout', async () => {
      const { run_id, session_id, approval } = await expiringRun({ expires_in_ms: 1_500, on_timeout: 'fail' });
      const run = await waitRun(harnessOf(stack.app), run_id, 'failed', 15_000);
      expect(run.error).toBe(`The approval request ${approval.id} expired unanswered.`);
      const decided = await decisions(session_id, approval.id);
      expect(decided).toHaveLength(1);
      expect(decided[0]).toMatchObject({ run_id, approval_id: approval.id, by: 'timeout', approved: false });
      const events = await runEvents(harnessOf(stack.app), session_id, run_id);
      expect(events.filter((e) => e.type === 'failed')).toHaveLength(1);
      expect(events.map(brief).slice(-2)).toEqual(['approval_decided', 'failed']);
      expect((await stack.app.backend.store.approvals.getApproval(T, approval.id))?.decided_by).toBe('timeout');
      expect((await call(`${stack.app.url}/api/approval/respond`, { method: 'POST', json: { id: approval.id, approved: true } })).status).toBe(409);
      // The decider logs once the run's end is settled (after its events): wait for the line.
      const deciders = () => stack.workers.filter((w) => w.lines.some((l) => l.json?.msg === 'approval expired: its run failed' && l.json.approval_id === approval.id));
      await waitFor('the decider’s log line', () => deciders().length > 0);
      expect(deciders()).toHaveLength(1);
    });

    it('on_timeout approve: decided once by timeout, the run completes with approved:true', async () => {
      const { run_id, session_id, approval } = await expiringRun({ expires_in_ms: 1_500, on_timeout: 'approve' });
      await waitRun(harnessOf(stack.app), run_id, 'completed', 15_000);
      const state = (await call(`${stack.app.url}/api/sessions/state?session_id=${session_id}`)).body;
      expect(state).toMatchObject({ node_id: '__end__', state: { approved: true, comment: 'expired' } });
      const decided = await decisions(session_id, approval.id);
      expect(decided).toHaveLength(1);
      expect(decided[0]).toMatchObject({ run_id, approval_id: approval.id, by: 'timeout', approved: true });
      expect(await stack.app.backend.store.approvals.getApproval(T, approval.id)).toMatchObject({ status: 'approved', decided_by: 'timeout' });
      expect((await call(`${stack.app.url}/api/approval/respond`, { method: 'POST', json: { id: approval.id, approved: false } })).status).toBe(409);
    });
  });
});
