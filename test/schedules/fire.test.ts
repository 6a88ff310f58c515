import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { builtInAgents } from '../../src/agents/index.js';
import { loadConfig } from '../../src/config.js';
import { newId } from '../../src/domain/time.js';
import { DEFAULT_TENANT as T, SCHEDULE_HISTORY_LIMIT, type Schedule } from '../../src/domain/types.js';
import { compose, type Composition } from '../../src/main/compose.js';
import { createLogger } from '../../src/main/logger.js';
import type { Backend } from '../../src/ports/backend.js';
import type { RunControl } from '../../src/ports/run-control.js';
import type { FireHandler } from '../../src/ports/scheduler.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { reconcileSchedules, triggerOf, type NewScheduleRequest } from '../../src/runtime/schedule-control.js';
import { createScheduleFirer, type FireOutcome } from '../../src/runtime/schedule-fire.js';
import { createFireSessions } from '../../src/runtime/schedule-sessions.js';
import { startRedis, uniquePrefix } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/** Every item of a list read (a page larger than any test writes). */
const ALL = { limit: 10_000, offset: 0 };
const MINUTE = 60_000;
const DUE = Date.parse('2026-11-21T10:00:00.000Z');
const logger = createLogger('silent');

/** The embedded backend executing runs, and a firer on it that is called directly with ticks. */
let composition: Composition;
let backend: Backend;
let runControl: RunControl;
let outcomes: FireOutcome[];
let firer: FireHandler;
const agents = new AgentRegistry(builtInAgents);

function makeFirer(control: RunControl = runControl, clock = () => DUE + 250): FireHandler {
  return createScheduleFirer({ store: backend.store, scheduler: backend.scheduler, runControl: control, logger, clock, onFire: (o) => outcomes.push(o) });
}

beforeEach(() => {
  // The embedded composition: it executes runs; its firer is replaced by the ticks the tests call.
  composition = compose(loadConfig({ LOG_LEVEL: 'silent' }), { logger, agents, defaultMetrics: false });
  composition.startExecuting();
  backend = composition.backend;
  runControl = composition.runs;
  outcomes = [];
  firer = makeFirer();
});
afterEach(async () => {
  await composition.close();
});

const create = (request: NewScheduleRequest): Promise<Schedule> => composition.schedules.create(T, request);
const tick = (schedule: Schedule, n = 0) => firer({ tenant: T, schedule_id: schedule.id, due_ms: DUE + n * MINUTE });
const history = (schedule: Schedule) => backend.store.schedules.listScheduleHistory(T, schedule.id);
const settled = (schedule: Schedule, count: number, status = 'completed') =>
  waitFor(`${count} ${status} records`, async () => {
    const records = await history(schedule);
    return records.length === count && records.every((r) => r.status === status) && records;
  });

describe('schedule fires', () => {
  it('new_session true: each tick starts a run on a new session; records settle when the runs complete', async () => {
    const schedule = await create({ agent_id: 'echo', cron_expr: '* * * * *', input: { from: 'cron' } });
    await tick(schedule, 0);
    await tick(schedule, 1);
    const records = await settled(schedule, 2);
    expect(records.map((r) => r.due_at)).toEqual([new Date(DUE + MINUTE).toISOString(), new Date(DUE).toISOString()]);
    expect(records[1]).toEqual({
      schedule_id: schedule.id,
      session_id: expect.any(String),
      fired_at: new Date(DUE + 250).toISOString(),
      due_at: new Date(DUE).toISOString(),
      status: 'completed',
      run_id: expect.any(String),
    });
    expect(new Set(records.map((r) => r.session_id)).size).toBe(2);
    for (const record of records) {
      const runs = await backend.store.runs.listRuns(T, record.session_id, ALL);
      expect(runs.map((r) => [r.id, r.status])).toEqual([[record.run_id, 'completed']]);
      expect((await backend.store.sessions.getCheckpoint(T, record.session_id))!.state).toMatchObject({ from: 'cron', echoed: true });
    }
    expect(outcomes).toEqual(['started', 'started']);
    // next_run moves to the tick after the later of the due time and the fire time.
    expect((await backend.store.schedules.getSchedule(T, schedule.id))!.next_run).toBe(new Date(DUE + 2 * MINUTE).toISOString());
  });

  it('new_session false: every tick uses the schedule’s one session', async () => {
    const schedule = await create({ agent_id: 'echo', cron_expr: '* * * * *', new_session: false });
    await tick(schedule, 0);
    await settled(schedule, 1);
    await tick(schedule, 1);
    const records = await settled(schedule, 2);
    expect(records.map((r) => r.session_id)).toEqual([schedule.session_id, schedule.session_id]);
    expect(await backend.store.runs.listRuns(T, schedule.session_id!, ALL)).toHaveLength(2);
  });

  it('human-review on a reused session: a tick while the approval is open is skipped; the record follows the run to completed', async () => {
    const schedule = await create({ agent_id: 'human-review', cron_expr: '* * * * *', new_session: false });
    await tick(schedule, 0);
    const [first] = await settled(schedule, 1, 'interrupted');
    await tick(schedule, 1);
    const [skipped] = await history(schedule);
    expect(skipped).toEqual({
      schedule_id: schedule.id,
      session_id: schedule.session_id,
      fired_at: expect.any(String),
      due_at: new Date(DUE + MINUTE).toISOString(),
      status: 'skipped',
    });
    expect(await backend.store.runs.listRuns(T, schedule.session_id!, ALL)).toHaveLength(1);
    expect(outcomes).toEqual(['started', 'skipped']);
    const [approval] = await backend.store.approvals.listPendingApprovals(T, ALL);
    await runControl.answerApproval(T, approval!.id, { approved: true, decided_by: 'test' });
    await waitFor('the first record completed', async () => (await history(schedule))[1]?.status === 'completed');
    expect((await history(schedule))[1]).toMatchObject({ run_id: first!.run_id, status: 'completed' });
    // Once the session is idle again, the next tick starts the second run on it.
    await tick(schedule, 2);
    const third = await waitFor('the third tick’s run interrupted', async () => {
      const [newest] = await history(schedule);
      return newest?.due_at === new Date(DUE + 2 * MINUTE).toISOString() && newest.status === 'interrupted' && newest;
    });
    expect(third).toMatchObject({ session_id: schedule.session_id, run_id: expect.any(String) });
    expect((await backend.store.runs.listRuns(T, schedule.session_id!, ALL)).map((r) => r.id)).toEqual([third.run_id, first!.run_id]);
    expect(outcomes).toEqual(['started', 'skipped', 'started']);
  });

  it('records a run that could not start as failed, with the reason', async () => {
    const schedule: Schedule = { ...(await create({ agent_id: 'echo', cron_expr: '* * * * *' })), id: newId(), agent_id: 'ghost' };
    await backend.store.schedules.createSchedule(T, schedule);
    await tick(schedule);
    expect(await history(schedule)).toEqual([expect.objectContaining({ status: 'failed', error: 'Agent "ghost" is not registered.' })]);
    expect(outcomes).toEqual(['failed']);
  });

  it('a tick of a schedule that no longer exists removes its trigger and records nothing', async () => {
    const schedule = await create({ agent_id: 'echo', cron_expr: '* * * * *' });
    await backend.store.schedules.deleteSchedule(T, schedule.id);
    expect((await backend.scheduler.list()).map((t) => t.schedule_id)).toContain(schedule.id);
    await tick(schedule);
    expect((await backend.scheduler.list()).map((t) => t.schedule_id)).not.toContain(schedule.id);
    expect(outcomes).toEqual([]);
  });

  it('refuses a webhook its runs would refuse, storing nothing', async () => {
    await expect(create({ agent_id: 'echo', cron_expr: '* * * * *', webhook: 'ftp://example.com/' })).rejects.toThrow(/webhook: not an http or https URL/);
    expect(await backend.store.schedules.listSchedules(T, ALL)).toEqual([]);
  });

  it('a tick past end_time, or of a disabled schedule, starts nothing, records nothing and removes the trigger', async () => {
    const due = Date.now() + 2 * 3_600_000;
    firer = makeFirer(runControl, () => due + 250);
    const ended = await create({ agent_id: 'echo', cron_expr: '* * * * *', end_time: new Date(due - 1).toISOString() });
    const disabled = await create({ agent_id: 'echo', cron_expr: '* * * * *', enabled: false });
    const triggers = async () => (await backend.scheduler.list()).map((t) => t.schedule_id);
    // The ended one can still fire now, so it has its trigger; a leftover trigger of the disabled one.
    expect(await triggers()).toEqual([ended.id]);
    await backend.scheduler.upsert(triggerOf(T, disabled));
    for (const schedule of [ended, disabled]) await firer({ tenant: T, schedule_id: schedule.id, due_ms: due });
    expect(await triggers()).toEqual([]);
    expect([await history(ended), await history(disabled)]).toEqual([[], []]);
    expect(await backend.store.sessions.listSessions(T, ALL)).toEqual([]);
    expect(outcomes).toEqual([]);
    // A tick at its end still fires.
    const last = await create({ agent_id: 'echo', cron_expr: '* * * * *', end_time: new Date(due).toISOString() });
    await firer({ tenant: T, schedule_id: last.id, due_ms: due });
    expect(outcomes).toEqual(['started']);
  });

  it('a tick that saw the schedule disabled keeps the trigger when a change enabled it before the removal', async () => {
    const schedule = await create({ agent_id: 'echo', cron_expr: '* * * * *' });
    // The first read sees it disabled; the change (enabled, its own upsert already done) lands before the second.
    vi.spyOn(backend.store.schedules, 'getSchedule').mockResolvedValueOnce({ ...schedule, enabled: false });
    await tick(schedule);
    expect((await backend.scheduler.list()).map((t) => t.schedule_id)).toEqual([schedule.id]);
    expect(await history(schedule)).toEqual([]);
  });

  it('starts a graph schedule’s run with its graph options, its metadata as the run’s, under its multitask', async () => {
    const requests: unknown[] = [];
    firer = makeFirer({
      ...runControl,
      startRun: async (tenant, request) => {
        requests.push(request);
        return runControl.startRun(tenant, request);
      },
    });
    const graph = { input: { note: 'x' }, config: { tags: ['t'] }, multitask_strategy: 'enqueue' };
    const webhook = 'https://hooks.example.com/runs';
    const schedule = await create({ agent_id: 'echo', cron_expr: '* * * * *', new_session: false, graph, multitask: 'enqueue', metadata: { from: 'cron' }, webhook });
    await tick(schedule);
    expect(requests).toEqual([{ agent_id: 'echo', session_id: schedule.session_id, graph: { ...graph, metadata: { from: 'cron' } }, multitask: 'enqueue', webhook }]);
  });

  it('reconciliation gives triggers only to the schedules that can fire', async () => {
    const live = await create({ agent_id: 'echo', cron_expr: '* * * * *' });
    const disabled = await create({ agent_id: 'echo', cron_expr: '* * * * *', enabled: false });
    const ended = await create({ agent_id: 'echo', cron_expr: '* * * * *', end_time: new Date(Date.now() - 1000).toISOString() });
    await backend.scheduler.remove(live.id);
    for (const schedule of [disabled, ended]) await backend.scheduler.upsert(triggerOf(T, schedule));
    expect(await reconcileSchedules(backend.store, backend.scheduler)).toEqual({ schedules: 3, upserted: 1, removed: 2, failed: 0, errors: [] });
    expect((await backend.scheduler.list()).map((t) => t.schedule_id)).toEqual([live.id]);
  });

  it('a re-delivered tick starts nothing', async () => {
    const schedule = await create({ agent_id: 'echo', cron_expr: '* * * * *' });
    await tick(schedule, 0);
    await tick(schedule, 0);
    const [record] = await settled(schedule, 1);
    expect((await backend.store.sessions.listSessions(T, { limit: 50, offset: 0 })).map((s) => s.id)).toEqual([record!.session_id]);
    expect(outcomes).toEqual(['started']);
  });

  it('settles the record of a run that ended before the record named it', async () => {
    // startRun answers only once the run has completed: the worker's settle found no link then.
    const slow: RunControl = {
      ...runControl,
      startRun: async (tenant, request) => {
        const ticket = await runControl.startRun(tenant, request);
        await waitFor('the run completed', async () => (await backend.store.runs.getRun(tenant, ticket.run_id))?.status === 'completed');
        return ticket;
      },
    };
    firer = makeFirer(slow);
    const schedule = await create({ agent_id: 'echo', cron_expr: '* * * * *' });
    await tick(schedule);
    expect(await history(schedule)).toEqual([expect.objectContaining({ status: 'completed', run_id: expect.any(String) })]);
  });

  it('never throws: a store failure is logged and counted as failed', async () => {
    const schedule = await create({ agent_id: 'echo', cron_expr: '* * * * *' });
    vi.spyOn(backend.store.schedules, 'beginScheduleFire').mockRejectedValueOnce(new Error('redis down'));
    await expect(tick(schedule)).resolves.toBeUndefined();
    expect(outcomes).toEqual(['failed']);
    expect(await history(schedule)).toEqual([]);
  });
});

describe('the sessions of a stateless cron’s fires (on_run_completed)', () => {
  /** A firer with what becomes of each fire's session, as the composition builds it. */
  const sessionsFirer = (control: RunControl = runControl): FireHandler =>
    createScheduleFirer({
      store: backend.store,
      scheduler: backend.scheduler,
      runControl: control,
      logger,
      clock: () => DUE + 250,
      sessions: createFireSessions({
        store: backend.store,
        end: (tenant, runId, end) => composition.lifecycle.end(tenant, runId, end),
        webhookEnqueued: (runId) => composition.webhooks.enqueued(runId),
        logger,
      }),
    });
  const gone = (sessionId: string) =>
    waitFor(`session ${sessionId} deleted`, async () => (await backend.store.sessions.getSession(T, sessionId)) === null);

  it('delete: the session goes once the run completed, and once a paused run is cancelled; the records stay', async () => {
    firer = sessionsFirer();
    const done = await create({ agent_id: 'echo', cron_expr: '* * * * *', on_run_completed: 'delete' });
    const pausing = await create({ agent_id: 'human-review', cron_expr: '* * * * *', on_run_completed: 'delete' });
    await tick(done);
    await tick(pausing);
    const [completed] = await settled(done, 1);
    const [cancelled] = await settled(pausing, 1, 'cancelled');
    for (const record of [completed!, cancelled!]) {
      await gone(record.session_id);
      expect(await backend.store.runs.getRun(T, record.run_id!)).toBeNull();
    }
    expect(await backend.store.approvals.listPendingApprovals(T, ALL)).toEqual([]);
  });

  it('delete: also when the run ended before the fire record named it', async () => {
    const slow: RunControl = {
      ...runControl,
      startRun: async (tenant, request) => {
        const ticket = await runControl.startRun(tenant, request);
        await waitFor('the run completed', async () => (await backend.store.runs.getRun(tenant, ticket.run_id))?.status === 'completed');
        return ticket;
      },
    };
    firer = sessionsFirer(slow);
    const schedule = await create({ agent_id: 'echo', cron_expr: '* * * * *', on_run_completed: 'delete' });
    await tick(schedule);
    const [record] = await settled(schedule, 1);
    await gone(record!.session_id);
  });

  it(`keep: the sessions of the fires the history lists stay; a fire pushing a record out of the last ${SCHEDULE_HISTORY_LIMIT} deletes its session`, async () => {
    firer = sessionsFirer();
    const schedule = await create({ agent_id: 'echo', cron_expr: '* * * * *', on_run_completed: 'keep' });
    const sessions: string[] = [];
    for (let n = 0; n < SCHEDULE_HISTORY_LIMIT + 2; n += 1) {
      await tick(schedule, n);
      const [latest] = await waitFor(`fire ${n} completed`, async () => {
        const records = await history(schedule);
        return records[0]?.due_at === new Date(DUE + n * MINUTE).toISOString() && records[0].status === 'completed' && records;
      });
      sessions.push(latest!.session_id);
    }
    const listed = (await history(schedule)).map((r) => r.session_id);
    expect(listed).toHaveLength(SCHEDULE_HISTORY_LIMIT);
    expect(listed).toEqual(sessions.slice(2).reverse());
    for (const id of sessions.slice(0, 2)) expect(await backend.store.sessions.getSession(T, id)).toBeNull();
    for (const id of sessions.slice(2)) expect(await backend.store.sessions.getSession(T, id)).not.toBeNull();
  });

  it.each(['memory', 'redis'] as const)('delete on %s: the run’s webhook is still sent, with the values the run ended with, before its session goes', async (mode) => {
    const bodies: Record<string, unknown>[] = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const redis = mode === 'redis' ? await startRedis() : undefined;
    const env = { LOG_LEVEL: 'silent', SERVICE_WEBHOOK_ALLOW_PRIVATE: 'true', ...(redis ? { REDIS_URL: redis.url, SERVICE_KEY_PREFIX: uniquePrefix() } : {}) };
    const hooked = compose(loadConfig(env), { logger, agents, defaultMetrics: false });
    try {
      hooked.startExecuting();
      const fire = createScheduleFirer({ store: hooked.backend.store, scheduler: hooked.backend.scheduler, runControl: hooked.runs, logger, clock: () => DUE + 250 });
      const webhook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/cron`;
      const schedule = await hooked.schedules.create(T, { agent_id: 'echo', cron_expr: '* * * * *', input: { from: 'cron' }, webhook, on_run_completed: 'delete' });
      await fire({ tenant: T, schedule_id: schedule.id, due_ms: DUE });
      const [body] = await waitFor('the webhook', () => bodies.length > 0 && bodies);
      expect(body).toMatchObject({ status: 'success', values: { from: 'cron', echoed: true } });
      await waitFor('the session deleted', async () => (await hooked.backend.store.sessions.getSession(T, String(body!.thread_id))) === null);
    } finally {
      await hooked.close();
      await redis?.stop();
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });

  it('a native schedule’s new sessions (no on_run_completed) are kept', async () => {
    firer = sessionsFirer();
    const schedule = await create({ agent_id: 'echo', cron_expr: '* * * * *' });
    await tick(schedule);
    const [record] = await settled(schedule, 1);
    expect(await backend.store.sessions.getSession(T, record!.session_id)).not.toBeNull();
  });
});
