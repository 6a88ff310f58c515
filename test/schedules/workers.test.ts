import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEDULES_QUEUE } from '../../src/adapters/redis/scheduler.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { startProcess, type AgentProcess } from '../support/processes.js';
import { startPrivateRedis, uniquePrefix, type PrivateRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/**
 * The real-time scenarios of schedules, run concurrently so the file takes about three minutes:
 * one private redis-server, an API in this process, two worker processes, and an embedded
 * process, all sharing the same minute ticks. Every `* * * * *` schedule is created at once in
 * `beforeAll`; each test then waits (with a deadline) for the ticks it needs.
 */

const T = 'DefaultTenant';
const MINUTE = 60_000;
/** Long enough for the ticks a test waits for (at most three minutes after creation) plus settling. */
const THREE_TICKS_MS = 4 * MINUTE + 30_000;

interface Record_ {
  schedule_id: string;
  session_id: string;
  fired_at: string;
  due_at: string;
  status: string;
  run_id?: string;
  error?: string;
}

let redis: PrivateRedis;
let raw: Redis;
let queue: Queue;
let prefix: string;
let api: TestApi;
let workers: AgentProcess[] = [];
let embedded: AgentProcess;
const s: Record<'fresh' | 'reused' | 'doomed' | 'review' | 'healed' | 'embedded', { id: string; session_id?: string }> = {} as never;

function startWorker(): Promise<AgentProcess> {
  return startProcess({
    entry: 'src/main/worker.ts',
    portVariable: 'WORKER_PORT',
    env: { REDIS_URL: redis.url, SERVICE_KEY_PREFIX: prefix, LOG_LEVEL: 'info' },
  });
}

const reconciled = (worker: AgentProcess) => worker.waitForLine((l) => l.json?.msg === 'schedules reconciled', 20_000);
const url = (path: string) => `${api.url}${path}`;

async function create(base: string, body: Record<string, unknown>): Promise<{ id: string; session_id?: string }> {
  const response = await call(`${base}/api/schedules`, { method: 'POST', json: { cron_expr: '* * * * *', ...body } });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body;
}

async function history(id: string, base = api.url): Promise<Record_[]> {
  const response = await call(`${base}/api/schedules/${id}/history`);
  expect(response.status).toBe(200);
  return response.body.history;
}

/** Waits until the schedule has `count` records (newest first) that satisfy `ok`. */
function records(id: string, count: number, ok: (r: Record_[]) => boolean = () => true, base = api.url): Promise<Record_[]> {
  return waitFor(`${count} history records of ${id}`, async () => {
    const list = await history(id, base);
    return list.length >= count && ok(list) && list;
  }, THREE_TICKS_MS, 250);
}

const runsOf = async (sessionId: string, base = api.url): Promise<{ id: string; status: string }[]> =>
  (await call(`${base}/api/runs?session_id=${sessionId}`)).body.runs;

beforeAll(async () => {
  redis = await startPrivateRedis();
  raw = new Redis(redis.url);
  prefix = uniquePrefix('sched');
  queue = new Queue(SCHEDULES_QUEUE, { connection: new Redis(redis.url, { maxRetriesPerRequest: null }), prefix });
  api = await startTestApi({ redisUrl: redis.url, env: { SERVICE_KEY_PREFIX: prefix } });
  [workers, embedded] = await Promise.all([
    Promise.all([startWorker(), startWorker()]),
    startProcess({ entry: 'src/main/api.ts', env: { REDIS_URL: undefined, LOG_LEVEL: 'warn' } }),
  ]);
  await Promise.all(workers.map(reconciled));
  s.fresh = await create(api.url, { agent_id: 'echo', input: { tag: 'fresh' } });
  s.reused = await create(api.url, { agent_id: 'echo', new_session: false });
  s.doomed = await create(api.url, { agent_id: 'echo', new_session: false });
  s.review = await create(api.url, { agent_id: 'human-review', new_session: false, input: { topic: 'cron' } });
  s.healed = await create(api.url, { agent_id: 'echo' });
  s.embedded = await create(embedded.url, { agent_id: 'echo' });
}, 60_000);

afterAll(async () => {
  const codes = await Promise.all(workers.map((w) => w.stop()));
  await embedded?.stop();
  await api?.close();
  await queue?.close();
  raw?.disconnect();
  await redis?.stop();
  expect(codes).toEqual(codes.map(() => 0));
}, 60_000);

describe('schedules with two worker processes on Redis', () => {
  it('survive an API restart', async () => {
    const before = (await call(url('/api/schedules'))).body.schedules;
    // Those of beforeAll that no other test deletes are there, whatever ran before.
    expect(before.map((x: { id: string }) => x.id)).toEqual(expect.arrayContaining([s.review.id, s.healed.id]));
    await api.close();
    api = await startTestApi({ redisUrl: redis.url, env: { SERVICE_KEY_PREFIX: prefix } });
    // The workers keep firing meanwhile: a minute tick between the two reads moves next_run on
    // (and only on); everything else is exactly what was stored.
    type Stored = { id: string; next_run: string };
    const same = (after: Stored, stored: Stored) => {
      const { next_run: next, ...rest } = after;
      const { next_run: was, ...wasRest } = stored;
      expect(rest).toEqual(wasRest);
      expect(Date.parse(next)).toBeGreaterThanOrEqual(Date.parse(was));
    };
    const after = (await call(url('/api/schedules'))).body.schedules as Stored[];
    expect(after.map((x) => x.id)).toEqual(before.map((x: Stored) => x.id));
    after.forEach((schedule, i) => same(schedule, before[i]));
    same((await call(url(`/api/schedules/${s.review.id}`))).body, before.find((x: Stored) => x.id === s.review.id));
  });

  it('survive a worker restart, which heals a job scheduler killed by hand and removes one without a schedule', async () => {
    expect(await queue.getJobScheduler(s.healed.id)).toBeDefined();
    // By hand, as a crash between the two writes would leave it: the schedule stays stored, its
    // job scheduler and pending tick are gone; and a job scheduler whose schedule never existed.
    const pending = (await raw.zrange(`${prefix}:${SCHEDULES_QUEUE}:delayed`, '0', '-1')).filter((id) => id.startsWith(`repeat:${s.healed.id}:`));
    await raw
      .multi()
      .zrem(`${prefix}:${SCHEDULES_QUEUE}:repeat`, s.healed.id)
      .del(`${prefix}:${SCHEDULES_QUEUE}:repeat:${s.healed.id}`, ...pending.map((id) => `${prefix}:${SCHEDULES_QUEUE}:${id}`))
      .zrem(`${prefix}:${SCHEDULES_QUEUE}:delayed`, ...pending, 'none')
      .exec();
    expect(await queue.getJobScheduler(s.healed.id)).toBeUndefined();
    await queue.upsertJobScheduler('orphan', { pattern: '0 0 1 1 *' }, { name: 'fire', data: { tenant: T, schedule_id: 'orphan' } });

    const stored = (await call(url('/api/schedules'))).body.schedules.length as number;
    expect(await workers[0]!.stop()).toBe(0);
    workers[0] = await startWorker();
    const line = await reconciled(workers[0]);
    expect(line.json).toMatchObject({ schedules: stored, upserted: 1, removed: 1, failed: 0 });
    expect(await queue.getJobScheduler(s.healed.id)).toMatchObject({ pattern: '* * * * *', tz: 'UTC' });
    expect(await queue.getJobScheduler('orphan')).toBeUndefined();
    const healedAt = Date.now();
    const [record] = await records(s.healed.id, 1, (r) => Date.parse(r[0]!.due_at) > healedAt);
    expect(record!.status).not.toBe('failed');
  }, THREE_TICKS_MS);

  it('DELETE stops further fires; GET, DELETE and history answer 404', async () => {
    // Delete between ticks, once its fires so far have their runs, so none is half-way through.
    await records(s.doomed.id, 1, (r) => r.every((x) => x.run_id) && Date.now() % MINUTE > 2000 && Date.now() % MINUTE < 55_000);
    expect((await call(url(`/api/schedules/${s.doomed.id}`), { method: 'DELETE' })).body).toEqual({ id: s.doomed.id, status: 'deleted' });
    const deletedAt = Date.now();
    const runs = (await runsOf(s.doomed.session_id!)).length;
    for (const response of [
      await call(url(`/api/schedules/${s.doomed.id}`)),
      await call(url(`/api/schedules/${s.doomed.id}`), { method: 'DELETE' }),
      await call(url(`/api/schedules/${s.doomed.id}/history`)),
    ]) {
      expect(response.status).toBe(404);
    }
    // Nothing is left that could fire it: no job scheduler, no pending tick.
    expect(await queue.getJobScheduler(s.doomed.id)).toBeUndefined();
    const pending = await raw.zrange(`${prefix}:${SCHEDULES_QUEUE}:delayed`, '0', '-1');
    expect(pending.filter((id) => id.startsWith(`repeat:${s.doomed.id}:`))).toEqual([]);
    // Past the next minute: another schedule's later tick completed, the deleted one started nothing.
    await records(s.healed.id, 1, (r) => r.some((x) => Date.parse(x.due_at) > deletedAt && x.status === 'completed'));
    expect(runs).toBeGreaterThanOrEqual(1);
    expect(await runsOf(s.doomed.session_id!)).toHaveLength(runs);
  }, THREE_TICKS_MS);

  it('human-review on a reused session: the next tick is skipped while the approval is open', async () => {
    // Oldest first: the first tick's run waits for its approval; every later tick is skipped.
    const [interrupted, skipped, ...later] = (await records(s.review.id, 2)).reverse();
    expect(interrupted!.status).toBe('interrupted');
    expect([skipped, ...later].map((r) => r!.status)).toEqual([skipped, ...later].map(() => 'skipped'));
    expect(Date.parse(skipped!.due_at) - Date.parse(interrupted!.due_at)).toBe(MINUTE);
    expect(skipped).not.toHaveProperty('run_id');
    expect([skipped!.session_id, interrupted!.session_id]).toEqual([s.review.session_id, s.review.session_id]);
    const pending = (await call(url('/api/approval/pending'))).body.pending.filter((a: { session_id: string }) => a.session_id === s.review.session_id);
    expect(pending).toHaveLength(1);
    expect(pending[0].run_id).toBe(interrupted!.run_id);
    expect((await call(url('/api/approval/respond'), { method: 'POST', json: { id: pending[0].id, approved: true } })).status).toBe(200);
    await records(s.review.id, 2, (r) => r.find((x) => x.run_id === interrupted!.run_id)?.status === 'completed');
  }, THREE_TICKS_MS);

  it('`* * * * *` for three minutes: exactly three fires; new sessions with new_session true, one session with false', async () => {
    const settled = (r: Record_[]) => r.every((x) => x.status === 'completed');
    const [fresh, reused] = await Promise.all([records(s.fresh.id, 3, settled), records(s.reused.id, 3, settled)]);
    // Stop both right away: the next tick is most of a minute away.
    for (const id of [s.fresh.id, s.reused.id]) expect((await call(url(`/api/schedules/${id}`), { method: 'DELETE' })).status).toBe(200);
    for (const list of [fresh, reused]) {
      expect(list).toHaveLength(3);
      const due = list.map((r) => Date.parse(r.due_at));
      expect(due[0]! - due[1]!).toBe(MINUTE);
      expect(due[1]! - due[2]!).toBe(MINUTE);
      for (const r of list) expect(Date.parse(r.fired_at)).toBeGreaterThanOrEqual(Date.parse(r.due_at));
      expect(new Set(list.map((r) => r.run_id)).size).toBe(3);
    }
    expect(new Set(fresh.map((r) => r.session_id)).size).toBe(3);
    for (const r of fresh) expect((await runsOf(r.session_id)).map((x) => [x.id, x.status])).toEqual([[r.run_id, 'completed']]);
    // Every session of the schedule's runs, found through its input: exactly three.
    const sessions = (await call(url('/api/sessions?agent_id=echo&limit=500'))).body.sessions;
    const tagged = [];
    for (const session of sessions) {
      const state = (await call(url(`/api/sessions/state?session_id=${session.id}`))).body.state;
      if (state?.tag === 'fresh') tagged.push(session.id);
    }
    expect(tagged.sort()).toEqual(fresh.map((r) => r.session_id).sort());
    expect(new Set(reused.map((r) => r.session_id))).toEqual(new Set([s.reused.session_id]));
    const reusedRuns = await runsOf(s.reused.session_id!);
    expect(reusedRuns.map((x) => x.id)).toEqual(reused.map((r) => r.run_id));
    expect(reusedRuns.every((x) => x.status === 'completed')).toBe(true);
  }, THREE_TICKS_MS);

  it('count fires in agentplane_schedule_fires_total on the workers', async () => {
    // Standing alone, whatever ran before: the echo schedules start a run each tick, and the
    // review schedule's run waits for its approval, so its later ticks are skipped. (A worker
    // restarted by another test starts its counts at zero; the sum of both is read.)
    const totals = async () => {
      const texts = await Promise.all(workers.map((w) => fetch(`${w.url}/metrics`).then((r) => r.text())));
      const total = (status: string) =>
        texts.reduce((sum, text) => sum + Number(new RegExp(`agentplane_schedule_fires_total\\{status="${status}"\\} (\\d+)`).exec(text)?.[1] ?? 0), 0);
      return { started: total('started'), skipped: total('skipped') };
    };
    const seen = await waitFor('started and skipped fires counted', async () => {
      const now = await totals();
      return now.started >= 3 && now.skipped >= 1 && now;
    }, THREE_TICKS_MS, 1_000);
    expect(seen.started).toBeGreaterThanOrEqual(3);
    expect(seen.skipped).toBeGreaterThanOrEqual(1);
  }, THREE_TICKS_MS);
});

describe('schedules in the embedded process (no Redis)', () => {
  it('fire in-process with timers: one run per tick on a new session each', async () => {
    const list = await records(s.embedded.id, 2, (r) => r.slice(0, 2).every((x) => x.status === 'completed'), embedded.url);
    const [second, first] = list;
    expect(Date.parse(second!.due_at) - Date.parse(first!.due_at)).toBe(MINUTE);
    expect(second!.session_id).not.toBe(first!.session_id);
    expect((await runsOf(first!.session_id, embedded.url)).map((r) => [r.id, r.status])).toEqual([[first!.run_id, 'completed']]);
  }, THREE_TICKS_MS);
});
