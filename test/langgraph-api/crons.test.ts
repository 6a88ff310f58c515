import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Annotation, END, START, StateGraph, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { Client, type Cron } from '@langchain/langgraph-sdk';
import { parse as parseUuid, v5 } from '@langchain/core/utils/uuid';
import { builtInAgents } from '../../src/agents/index.js';
import { DEFAULT_TENANT as T } from '../../src/domain/types.js';
import type { ScheduleTrigger } from '../../src/ports/scheduler.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { graphAgent } from '../support/langgraph.js';
import { startRedis, useRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { useApiWithWorkers } from '../support/workers.js';

/**
 * LangGraph crons (agentplane schedules) driven by the real `@langchain/langgraph-sdk` Client:
 * create, search, count, update and delete on memory and Redis, the per-tenant cap, what a tick
 * starts and what becomes of a stateless cron's threads, and a cron on Redis with two worker
 * processes firing one run per tick. Our cron expressions have
 * five fields, so ticks are minutes: the tests that need one wait for it (bounded), and they run
 * at once (`describe.concurrent`, each on its own API and Redis) so that they wait for the same
 * ticks rather than one after the other.
 */

const assistantIdOf = (graphId: string) => v5(graphId, parseUuid('6ba7b821-9dad-11d1-80b4-00c04fd430c8'));
const MINUTE = 60_000;
/** The next minute tick with its run done, on a loaded machine. */
const TICK_MS = 2 * MINUTE;

/** Appends the input's note; keeps the run's configurable tag. */
const notes = new StateGraph(
  Annotation.Root({ note: Annotation<string>, notes: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }), tag: Annotation<string> }),
)
  .addNode('write', (state, config: LangGraphRunnableConfig) => ({ notes: [state.note], tag: String(config.configurable?.tag ?? 'none') }))
  .addEdge(START, 'write')
  .addEdge('write', END)
  .compile();

/** The status and JSON body of the HTTP error an SDK call fails with. */
async function failure(promise: Promise<unknown> | (() => Promise<unknown>)): Promise<{ status: number; body: any }> {
  const error = await (typeof promise === 'function' ? promise() : promise).then(
    () => undefined,
    (e: unknown) => e as { status?: number; text?: string },
  );
  if (!error) throw new Error('expected the call to fail');
  return { status: error.status ?? 0, body: JSON.parse(error.text ?? 'null') };
}

/** `date` as hh:mm in `timeZone`. */
const clockIn = (date: string, timeZone: string) => new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(date));

const BACKENDS = ['memory', 'redis'] as const;
type Backend = (typeof BACKENDS)[number];

/** An API in this process on one backend, executing runs and firing schedules, and the SDK's client of it. */
interface CronApi {
  redis: TestRedis | undefined;
  app: TestApi;
  client: Client;
  newThread(): Promise<string>;
  triggerOf(cronId: string): Promise<ScheduleTrigger | undefined>;
  runsOf(sessionId: string): Promise<{ id: string; status: string }[]>;
  historyOf(cronId: string): Promise<{ session_id: string; status: string; run_id?: string }[]>;
}

async function startCronApi(backend: Backend): Promise<CronApi> {
  const redis = backend === 'redis' ? await startRedis() : undefined;
  const app = await startTestApi({ agents: new AgentRegistry([...builtInAgents, graphAgent('lg-notes', notes, ['write'])]), ...(redis ? { redisUrl: redis.url } : {}) });
  expect(app.backend.mode).toBe(backend);
  app.composition.startExecuting();
  app.composition.startScheduling();
  return {
    redis,
    app,
    client: new Client({ apiUrl: app.url }),
    newThread: async () => {
      const id = randomUUID();
      await app.backend.store.sessions.createSession(T, { session_id: id });
      return id;
    },
    triggerOf: async (cronId) => (await app.backend.scheduler.list()).find((t) => t.schedule_id === cronId),
    runsOf: async (sessionId) => (await call(`${app.url}/api/runs?session_id=${sessionId}`)).body.runs,
    historyOf: async (cronId) => (await call(`${app.url}/api/schedules/${cronId}/history`)).body.history,
  };
}

// One API per backend for the whole file: the tests of each backend run in order, and the tick
// tests of both (below) at once.
const apis = {} as Record<Backend, CronApi>;
beforeAll(async () => {
  for (const backend of BACKENDS) apis[backend] = await startCronApi(backend);
});
afterAll(async () => {
  for (const api of Object.values(apis)) {
    await api.app.close();
    await api.redis?.stop();
  }
});

describe.each(BACKENDS)('LangGraph SDK: crons on %s', (backend) => {
  let redis: TestRedis | undefined;
  let app: TestApi;
  let client: Client;
  let newThread: CronApi['newThread'];
  let triggerOf: CronApi['triggerOf'];
  let runsOf: CronApi['runsOf'];
  beforeAll(() => {
    ({ redis, app, client, newThread, triggerOf, runsOf } = apis[backend]);
  });

  it('creates a cron for a thread and a stateless one, answered as the SDK reads a Cron, in their time zones', async () => {
    const thread = await newThread();
    const end = new Date(Date.now() + 30 * 24 * 3_600_000).toISOString();
    const before = Date.now();
    const bound = await client.crons.createForThread(thread, 'lg-notes', {
      schedule: '*/5 * * * *',
      input: { note: 'hi' },
      config: { configurable: { tag: 't' }, tags: ['x'] },
      context: { user: 'u' },
      metadata: { team: 'a' },
      interruptBefore: ['write'],
      webhook: 'https://hooks.example.com/cron',
      timezone: 'Europe/Berlin',
      endTime: end,
    });
    expect(bound).toEqual({
      cron_id: expect.any(String),
      assistant_id: assistantIdOf('lg-notes'),
      thread_id: thread,
      on_run_completed: null,
      end_time: end,
      schedule: '*/5 * * * *',
      timezone: 'Europe/Berlin',
      created_at: expect.any(String),
      updated_at: bound.created_at,
      payload: {
        input: { note: 'hi' },
        config: { configurable: { tag: 't' }, tags: ['x'] },
        context: { user: 'u' },
        interrupt_before: ['write'],
        multitask_strategy: 'reject',
        webhook: 'https://hooks.example.com/cron',
      },
      user_id: null,
      next_run_date: expect.any(String),
      metadata: { team: 'a' },
      enabled: true,
    });
    // The first tick after the moment of creation (after `before`, before now).
    const next = Date.parse((bound as Cron).next_run_date!);
    expect(next % (5 * MINUTE)).toBe(0);
    expect(next).toBeGreaterThan(before);
    expect(next - Date.now()).toBeLessThanOrEqual(5 * MINUTE);

    const webhook = 'http://hooks.example.com/morning';
    const statelessAsked = Date.now();
    const stateless = await client.crons.create(assistantIdOf('echo'), { schedule: '0 9 * * *', timezone: 'America/New_York', input: { text: 'morning' }, webhook });
    expect(stateless).toMatchObject({ assistant_id: assistantIdOf('echo'), thread_id: null, on_run_completed: 'delete', end_time: null, payload: { input: { text: 'morning' }, webhook }, metadata: {} });
    const kept = await client.crons.create('echo', { schedule: '0 9 * * *', onRunCompleted: 'keep' });
    expect((kept as Cron).on_run_completed).toBe('keep');
    // Only a stateless cron's threads go: a thread's cron ignores it and keeps its thread.
    const boundKeeps = await client.crons.createForThread(await newThread(), 'echo', { schedule: '0 9 * * *', onRunCompleted: 'delete' });
    expect((boundKeeps as Cron).on_run_completed).toBeNull();
    expect((await client.crons.update(kept.cron_id, { onRunCompleted: 'delete' })).on_run_completed).toBe('delete');
    for (const id of [kept.cron_id, boundKeeps.cron_id]) await client.crons.delete(id);
    const morning = (stateless as Cron).next_run_date!;
    expect(clockIn(morning, 'America/New_York')).toBe('09:00');
    expect(Date.parse(morning)).toBeGreaterThan(statelessAsked);
    expect(Date.parse(morning) - Date.now()).toBeLessThanOrEqual(24 * 3_600_000);

    // A cron is a schedule: the same one through /api/schedules, bound to the thread.
    const schedule = (await call(`${app.url}/api/schedules/${bound.cron_id}`)).body;
    expect(schedule).toMatchObject({ id: bound.cron_id, agent_id: 'lg-notes', new_session: false, session_id: thread, cron_expr: '*/5 * * * *', end_time: end, webhook: 'https://hooks.example.com/cron' });
    expect(await triggerOf(bound.cron_id)).toMatchObject({ cron_expr: '*/5 * * * *', timezone: 'Europe/Berlin' });
    for (const id of [bound.cron_id, stateless.cron_id]) await client.crons.delete(id);
  });

  it('searches and counts by assistant, thread, enabled and metadata, sorted and paged, with select', async () => {
    const [one, two] = [await newThread(), await newThread()];
    const made = [
      await client.crons.createForThread(one, 'lg-notes', { schedule: '0 1 * * *', metadata: { kind: 'search', n: 1 } }),
      await client.crons.createForThread(two, 'echo', { schedule: '0 2 * * *', metadata: { kind: 'search', n: 2 } }),
      await client.crons.create('echo', { schedule: '0 3 * * *', metadata: { kind: 'search', n: 3 }, enabled: false }),
    ];
    const ids = (crons: { cron_id?: string }[]) => crons.map((c) => c.cron_id);
    const kind = { kind: 'search' };
    expect(ids(await client.crons.search({ metadata: kind, sortBy: 'created_at', sortOrder: 'asc' }))).toEqual(ids(made));
    expect(ids(await client.crons.search({ metadata: kind }))).toEqual(ids(made).reverse());
    expect(ids(await client.crons.search({ metadata: kind, threadId: one }))).toEqual([made[0]!.cron_id]);
    expect(ids(await client.crons.search({ metadata: kind, assistantId: 'echo', sortOrder: 'asc' }))).toEqual(ids(made.slice(1)));
    expect(ids(await client.crons.search({ metadata: kind, assistantId: assistantIdOf('echo'), sortOrder: 'asc' }))).toEqual(ids(made.slice(1)));
    expect(ids(await client.crons.search({ metadata: { ...kind, n: 2 } }))).toEqual([made[1]!.cron_id]);
    expect(ids(await client.crons.search({ metadata: kind, enabled: false }))).toEqual([made[2]!.cron_id]);
    expect(ids(await client.crons.search({ metadata: kind, sortBy: 'created_at', sortOrder: 'asc', limit: 1, offset: 1 }))).toEqual([made[1]!.cron_id]);
    expect(await client.crons.search({ metadata: kind, threadId: two, select: ['cron_id', 'thread_id'] })).toEqual([{ cron_id: made[1]!.cron_id, thread_id: two }]);
    const byThread = await client.crons.search({ metadata: kind, sortBy: 'thread_id', sortOrder: 'desc' });
    expect(byThread.map((c) => c.thread_id)).toEqual([[one, two].sort().reverse(), null].flat());
    expect(await client.crons.count({ metadata: kind })).toBe(3);
    expect(await client.crons.count({ metadata: kind, assistantId: 'echo' })).toBe(2);
    expect(await client.crons.count({ metadata: kind, threadId: one })).toBe(1);
    expect(await client.crons.count({ assistantId: 'nobody' })).toBe(0);
    for (const cron of made) await client.crons.delete(cron.cron_id);
    expect(await client.crons.count({ metadata: kind })).toBe(0);
  });

  it('refuses bad crons with a 4xx and detail, storing nothing', async () => {
    const thread = await newThread();
    const before = await client.crons.count();
    const theirs = await newThread();
    await call(`${app.url}/api/runs/wait`, { method: 'POST', json: { agent_id: 'echo', session_id: theirs, input: {} } });
    const cases: [() => Promise<unknown>, number, RegExp][] = [
      [() => client.crons.createForThread(randomUUID(), 'echo', { schedule: '* * * * *' }), 404, /Thread/],
      [() => client.crons.create('nobody', { schedule: '* * * * *' }), 404, /Assistant "nobody"/],
      [() => client.crons.create('echo', { schedule: '* * * * * *' }), 400, /exactly 5 fields/],
      [() => client.crons.create('echo', { schedule: '* * * * *', timezone: 'Mars/Olympus' }), 400, /timezone/],
      [() => client.crons.create('echo', { schedule: '* * * * *', endTime: 'tomorrow' }), 400, /end_time/],
      [() => client.crons.create('echo', { schedule: '* * * * *', onRunCompleted: 'drop' as never }), 400, /on_run_completed/],
      [() => client.crons.create('echo', { schedule: '* * * * *', webhook: 'ftp://hooks.example.com/' }), 400, /webhook/],
      [() => client.crons.create('echo', { schedule: '* * * * *', interruptBefore: ['echo'] }), 400, /interrupt_before: assistant "echo" is not a graph/],
      [() => client.crons.create('echo', { schedule: '* * * * *', input: ['a list'] as never }), 400, /input/],
      [() => client.crons.createForThread(theirs, 'lg-notes', { schedule: '* * * * *' }), 409, /belongs to assistant "echo"/],
      [() => client.crons.update(randomUUID(), { enabled: false }), 404, /cron/],
      [() => client.crons.delete(randomUUID()), 404, /schedule/],
    ];
    for (const [promise, status, detail] of cases) {
      const { status: got, body } = await failure(promise);
      expect([got, body.detail]).toEqual([status, expect.stringMatching(detail)]);
      expect(body.error.message).toBe(body.detail);
    }
    expect(await client.crons.count()).toBe(before);
    expect(await runsOf(thread)).toEqual([]);
  });

  it('updates the schedule, time zone, end, input and metadata (merged); disabling removes the trigger, enabling brings it back', async () => {
    const thread = await newThread();
    const cron = await client.crons.createForThread(thread, 'lg-notes', { schedule: '0 6 * * *', input: { note: 'old' }, metadata: { team: 'a', keep: true } });
    const end = new Date(Date.now() + 7 * 24 * 3_600_000).toISOString();
    const changed = await client.crons.update(cron.cron_id, {
      schedule: '30 12 * * *',
      timezone: 'Asia/Tokyo',
      endTime: end,
      input: { note: 'new' },
      config: { configurable: { tag: 'u' } },
      metadata: { team: null, owner: 'o' },
    });
    expect(changed).toMatchObject({
      cron_id: cron.cron_id,
      thread_id: thread,
      schedule: '30 12 * * *',
      timezone: 'Asia/Tokyo',
      end_time: end,
      payload: { input: { note: 'new' }, config: { configurable: { tag: 'u' } }, multitask_strategy: 'reject' },
      metadata: { keep: true, owner: 'o' },
      enabled: true,
      created_at: cron.created_at,
    });
    expect(Date.parse(changed.updated_at)).toBeGreaterThanOrEqual(Date.parse(cron.created_at));
    expect(clockIn(changed.next_run_date!, 'Asia/Tokyo')).toBe('12:30');
    expect(await triggerOf(cron.cron_id)).toMatchObject({ cron_expr: '30 12 * * *', timezone: 'Asia/Tokyo' });

    const off = await client.crons.update(cron.cron_id, { enabled: false });
    expect(off).toMatchObject({ enabled: false, next_run_date: null, schedule: '30 12 * * *', payload: { input: { note: 'new' } } });
    expect(await triggerOf(cron.cron_id)).toBeUndefined();
    const on = await client.crons.update(cron.cron_id, { enabled: true, endTime: null });
    expect(on).toMatchObject({ enabled: true, end_time: null, next_run_date: changed.next_run_date });
    expect(await triggerOf(cron.cron_id)).toMatchObject({ cron_expr: '30 12 * * *' });
    // An end already past: it can never fire again, so its trigger goes.
    const ended = await client.crons.update(cron.cron_id, { endTime: new Date(Date.now() - MINUTE).toISOString() });
    expect(ended.next_run_date).toBeNull();
    expect(await triggerOf(cron.cron_id)).toBeUndefined();
    expect((await failure(client.crons.update(cron.cron_id, { schedule: 'never' }))).status).toBe(400);
    expect((await client.crons.search({ threadId: thread }))[0]).toEqual(ended);

    await client.crons.delete(cron.cron_id);
    expect(await client.crons.search({ threadId: thread })).toEqual([]);
    expect((await failure(client.crons.delete(cron.cron_id))).status).toBe(404);
  });

  it('refuses a schedule past the tenant’s SERVICE_SCHEDULES_MAX_PER_TENANT, crons and /api/schedules alike: 409, nothing stored, no trigger', async () => {
    const capped = await startTestApi({ ...(redis ? { redisUrl: redis.url } : {}), env: { SERVICE_SCHEDULES_MAX_PER_TENANT: '3' } });
    try {
      const sdk = new Client({ apiUrl: capped.url });
      const thread = randomUUID();
      await capped.backend.store.sessions.createSession(T, { session_id: thread });
      const native = await call(`${capped.url}/api/schedules`, { method: 'POST', json: { agent_id: 'echo', cron_expr: '0 5 * * *' } });
      expect(native.status).toBe(201);
      await sdk.crons.create('echo', { schedule: '0 6 * * *' });
      const bound = await sdk.crons.createForThread(thread, 'echo', { schedule: '0 7 * * *' });
      const refusals = [
        await failure(sdk.crons.create('echo', { schedule: '0 8 * * *' })),
        await failure(sdk.crons.createForThread(thread, 'echo', { schedule: '0 8 * * *' })),
        await call(`${capped.url}/api/schedules`, { method: 'POST', json: { agent_id: 'echo', cron_expr: '0 8 * * *' } }),
      ];
      for (const refused of refusals) {
        expect(refused.status).toBe(409);
        expect(refused.body.error).toEqual({ code: 'conflict', message: expect.stringMatching(/3 schedules.*SERVICE_SCHEDULES_MAX_PER_TENANT/) });
      }
      expect(await sdk.crons.count()).toBe(3);
      expect(await capped.backend.scheduler.list()).toHaveLength(3);
      // The cap is each tenant's.
      await capped.composition.schedules.create('OtherTenant', { agent_id: 'echo', cron_expr: '0 8 * * *' });
      // One place freed: of three creations at once, one is stored.
      await sdk.crons.delete(bound.cron_id);
      const racing = await Promise.allSettled([1, 2, 3].map((n) => sdk.crons.create('echo', { schedule: `0 ${n} * * *` })));
      expect(racing.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(await sdk.crons.count()).toBe(3);
      expect((await capped.backend.store.schedules.listSchedules(T, { limit: 10, offset: 0 })).length).toBe(3);
    } finally {
      await capped.close();
    }
  });
});

describe.concurrent('LangGraph SDK: crons at the minute ticks', () => {
  it.each(BACKENDS)(
    'on %s, at the next minute tick: a thread’s cron runs on the thread with its payload, a stateless one on a new thread (deleted once its run stops, ended or paused, unless kept); an ended or disabled one starts nothing',
    async (backend) => {
      const { app, client, newThread, triggerOf, runsOf, historyOf } = apis[backend];
      // A cron ending a second from now must still have its trigger at creation and see its first tick after its end.
      await waitFor('not in the last seconds of a minute', () => Date.now() % MINUTE < 50_000, MINUTE, 250);
      const thread = await newThread();
      const bound = await client.crons.createForThread(thread, 'lg-notes', {
        schedule: '* * * * *',
        input: { note: 'tick' },
        config: { configurable: { tag: 'cron' } },
        metadata: { from: 'cron' },
      });
      const stateless = await client.crons.create('echo', { schedule: '* * * * *', input: { text: 'tock' }, onRunCompleted: 'keep' });
      // The default: each tick's thread deleted once its run stops, ended or paused (the paused run cancelled).
      const discarding = await client.crons.create('echo', { schedule: '* * * * *', input: { text: 'gone' } });
      const pausing = await client.crons.create('human-review', { schedule: '* * * * *', input: {} });
      expect([(discarding as Cron).on_run_completed, (pausing as Cron).on_run_completed]).toEqual(['delete', 'delete']);
      const past = await client.crons.create('echo', { schedule: '* * * * *', endTime: new Date(Date.now() - 1000).toISOString() });
      const ending = await client.crons.create('echo', { schedule: '* * * * *', endTime: new Date(Date.now() + 1000).toISOString() });
      const disabled = await client.crons.create('echo', { schedule: '* * * * *', enabled: false });
      expect(past.next_run_date).toBeNull();
      expect(await triggerOf(past.cron_id)).toBeUndefined();
      expect(await triggerOf(disabled.cron_id)).toBeUndefined();
      expect(await triggerOf(ending.cron_id)).toBeDefined();

      const [run] = await waitFor('the thread cron’s run completed', async () => {
        const runs = await runsOf(thread);
        return runs.length > 0 && runs.every((r) => r.status === 'completed') && runs;
      }, TICK_MS, 250);
      const [record] = await waitFor('the stateless cron’s run completed', async () => {
        const history = await historyOf(stateless.cron_id);
        return history.length > 0 && history[0]!.status === 'completed' && history;
      }, TICK_MS, 250);
      await waitFor('the trigger of the cron past its end removed at its tick', async () => !(await triggerOf(ending.cron_id)), TICK_MS, 250);
      const settled = (cronId: string, status: string) =>
        waitFor(`the fire of ${cronId} ${status}`, async () => {
          const history = await historyOf(cronId);
          return history.length > 0 && history[0]!.status === status && history[0]!;
        }, TICK_MS, 250);
      const [discarded, paused] = [await settled(discarding.cron_id, 'completed'), await settled(pausing.cron_id, 'cancelled')];
      for (const fire of [discarded, paused]) {
        await waitFor(`the thread ${fire.session_id} deleted`, async () => (await app.backend.store.sessions.getSession(T, fire.session_id)) === null);
        expect(await app.backend.store.runs.getRun(T, fire.run_id!)).toBeNull();
      }
      expect(await app.backend.store.approvals.listPendingApprovals(T, { limit: 500, offset: 0 })).not.toContainEqual(expect.objectContaining({ session_id: paused.session_id }));

      expect((await call(`${app.url}/api/sessions/state?session_id=${thread}`)).body.state).toMatchObject({ notes: ['tick'], tag: 'cron' });
      expect(JSON.parse((await app.backend.store.runs.getRunInput(T, run!.id))!)).toMatchObject({ input: { note: 'tick' }, metadata: { from: 'cron' } });
      expect(record!.session_id).not.toBe(thread);
      expect((await runsOf(record!.session_id)).map((r) => [r.id, r.status])).toEqual([[record!.run_id, 'completed']]);
      expect((await call(`${app.url}/api/sessions/state?session_id=${record!.session_id}`)).body.state).toMatchObject({ text: 'tock', echoed: true });
      for (const cron of [past, ending, disabled]) expect(await historyOf(cron.cron_id)).toEqual([]);
      expect((await client.crons.search({ threadId: thread }))[0]!.next_run_date).not.toBe(bound.next_run_date);
      for (const cron of [bound, stateless, discarding, pausing, past, ending, disabled]) await client.crons.delete(cron.cron_id);
    },
    TICK_MS + MINUTE,
  );

  describe('firing once across two workers', () => {
    // Registered before the workers' hooks: after hooks run in reverse, so Redis stops after the workers.
    const redis = useRedis();
    const env = useApiWithWorkers(() => redis.url);

    it(
      'a thread’s cron and a stateless cron on two worker processes: one run per tick, two ticks',
      async () => {
        const { app } = env;
        const client = new Client({ apiUrl: app.url });
        const thread = randomUUID();
        await app.backend.store.sessions.createSession(T, { session_id: thread });
        const createdAt = Date.now();
        const bound = await client.crons.createForThread(thread, 'echo', { schedule: '* * * * *', input: { text: 'bound' } });
        const stateless = await client.crons.create('echo', { schedule: '* * * * *', input: { text: 'free' } });
        const history = async (id: string) => (await call(`${app.url}/api/schedules/${id}/history`)).body.history as { due_at: string; session_id: string; status: string; run_id?: string }[];
        const twoDone = (id: string) =>
          waitFor(`two completed fires of ${id}`, async () => {
            const records = await history(id);
            return records.length >= 2 && records.every((r) => r.status === 'completed') && records;
          }, 3 * MINUTE + 30_000, 500);
        const [boundFires, freeFires] = await Promise.all([twoDone(bound.cron_id), twoDone(stateless.cron_id)]);
        // Stop both at once: the next tick is most of a minute away.
        for (const cron of [bound, stateless]) await client.crons.delete(cron.cron_id);
        const deletedAt = Date.now();
        const ticks = Math.floor(deletedAt / MINUTE) - Math.floor(createdAt / MINUTE);

        for (const fires of [boundFires, freeFires]) {
          expect(fires).toHaveLength(ticks);
          const due = fires.map((r) => Date.parse(r.due_at));
          expect(new Set(due).size).toBe(fires.length);
          due.slice(1).forEach((d, i) => expect(due[i]! - d).toBe(MINUTE));
          expect(new Set(fires.map((r) => r.run_id)).size).toBe(fires.length);
        }
        const runs = (await call(`${app.url}/api/runs?session_id=${thread}`)).body.runs as { id: string; status: string }[];
        expect(runs.map((r) => r.id).sort()).toEqual(boundFires.map((r) => r.run_id).sort());
        expect(runs.every((r) => r.status === 'completed')).toBe(true);
        expect(new Set(freeFires.map((r) => r.session_id)).size).toBe(freeFires.length);
        // Stateless, on_run_completed "delete" (the default): each tick's thread went once its run completed.
        for (const fire of freeFires) {
          await waitFor(`the thread ${fire.session_id} deleted`, async () => (await app.backend.store.sessions.getSession(T, fire.session_id)) === null);
          expect((await call(`${app.url}/api/runs?session_id=${fire.session_id}`)).status).toBe(404);
        }
      },
      4 * MINUTE,
    );
  });
});
