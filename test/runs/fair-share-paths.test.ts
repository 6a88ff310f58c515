import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import agents from '../fixtures/agents.js';
import { createLogger } from '../../src/main/logger.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { createScheduleFirer } from '../../src/runtime/schedule-fire.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import type { AgentProcess } from '../support/processes.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { startRunWorker } from './backends.js';

/*
 * The tenant's queued cap on the start paths other than POST /api/runs (fair-share.test.ts):
 * LangGraph thread runs and stateless runs are refused 429 with Retry-After and store nothing,
 * a schedule fire past the cap is recorded failed and a later one starts once there is room,
 * and a resume after an approval is never refused (it keeps its session's place). Each test
 * has a tenant of its own that may run 1 run and queue 2: a waiter run holds its slot, two
 * slow runs fill its queue.
 */

const TENANTS = ['Graphs', 'Stateless', 'Fires', 'Resumes'] as const;
type Tenant = (typeof TENANTS)[number];
const KEYS = TENANTS.map((t) => `key-${t.toLowerCase()}-0123456789abcdef`);
const ENV = {
  SERVICE_AUTH: 'apikey',
  SERVICE_API_KEYS: TENANTS.map((t, i) => `${KEYS[i]}:admin:${t}`).join(','),
  SERVICE_RATE_LIMIT: 'off',
  SERVICE_TENANTS: JSON.stringify(Object.fromEntries(TENANTS.map((t) => [t, { max_running: 1, max_queued: 2 }]))),
};
const NODE_MS = '200';

const as = (tenant: Tenant) => ({ 'X-Api-Key': KEYS[TENANTS.indexOf(tenant)]! });
const get = (url: string, tenant: Tenant) => call(url, { headers: as(tenant) });
const post = (url: string, tenant: Tenant, json: unknown) => call(url, { method: 'POST', headers: as(tenant), json });

async function start(url: string, tenant: Tenant, agent: string, input: Record<string, unknown> = {}): Promise<string> {
  const started = await post(`${url}/api/runs`, tenant, { agent_id: agent, input });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  return started.body.run_id as string;
}

const statusOf = async (url: string, tenant: Tenant, run: string): Promise<string> => (await get(`${url}/api/runs/${run}`, tenant)).body.status as string;

/** The tenant's one slot held by a waiter run, and its queue full with two slow runs. */
async function fill(url: string, tenant: Tenant): Promise<{ waiter: string; queued: string[] }> {
  const waiter = await start(url, tenant, 'waiter');
  await waitFor('the waiter holds the tenant’s slot', async () => (await statusOf(url, tenant, waiter)) === 'running', 60_000);
  const queued = [await start(url, tenant, 'slow'), await start(url, tenant, 'slow')];
  expect((await get(`${url}/api/queue`, tenant)).body).toMatchObject({ queued: 2, running: 1, max_queued: 2 });
  return { waiter, queued };
}

/** Cancels the waiter; the queued runs then run, and the tenant's queue empties. */
async function drain(url: string, tenant: Tenant, waiter: string): Promise<void> {
  expect((await post(`${url}/api/runs/${waiter}/cancel`, tenant, {})).status).toBe(200);
  await waitFor('the tenant’s queue empty', async () => {
    const queue = (await get(`${url}/api/queue`, tenant)).body;
    return queue.queued === 0 && queue.running === 0;
  }, 60_000);
}

const sessionsOf = async (url: string, tenant: Tenant) => (await get(`${url}/api/sessions?limit=500`, tenant)).body;

function expectRefused(response: { status: number; headers: Headers; body: any }): void {
  expect(response.status, JSON.stringify(response.body)).toBe(429);
  expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
  expect(response.body.error).toMatchObject({ code: 'rate_limited', message: expect.stringMatching(/waiting for a worker/) });
}

function scenarios(app: () => TestApi): void {
  it('refuses a LangGraph thread run past the cap with 429 and Retry-After: no run, and no thread made for it', async () => {
    const { url } = app();
    const tenant = 'Graphs';
    const thread = (await post(`${url}/threads`, tenant, {})).body.thread_id as string;
    const { waiter } = await fill(url, tenant);
    const sessionsBefore = await sessionsOf(url, tenant);
    expectRefused(await post(`${url}/threads/${thread}/runs`, tenant, { assistant_id: 'slow', input: {} }));
    expect((await get(`${url}/threads/${thread}/runs`, tenant)).body).toEqual([]);
    const fresh = randomUUID();
    expectRefused(await post(`${url}/threads/${fresh}/runs`, tenant, { assistant_id: 'slow', input: {}, if_not_exists: 'create' }));
    expect((await get(`${url}/threads/${fresh}`, tenant)).status).toBe(404);
    expect(await sessionsOf(url, tenant)).toEqual(sessionsBefore);
    expect((await get(`${url}/api/queue`, tenant)).body).toMatchObject({ queued: 2, running: 1 });
    await drain(url, tenant, waiter);
    // With room again, the same start is taken.
    expect((await post(`${url}/threads/${thread}/runs`, tenant, { assistant_id: 'slow', input: {} })).status).toBe(200);
  });

  it('refuses a stateless run (POST /runs/wait) past the cap with 429 and Retry-After, storing nothing', async () => {
    const { url } = app();
    const tenant = 'Stateless';
    const { waiter } = await fill(url, tenant);
    const sessionsBefore = await sessionsOf(url, tenant);
    expectRefused(await post(`${url}/runs/wait`, tenant, { assistant_id: 'slow', input: {} }));
    expectRefused(await post(`${url}/runs`, tenant, { assistant_id: 'slow', input: {} }));
    expect(await sessionsOf(url, tenant)).toEqual(sessionsBefore);
    expect((await get(`${url}/api/queue`, tenant)).body).toMatchObject({ queued: 2, running: 1 });
    await drain(url, tenant, waiter);
  });

  it('records a schedule fire past the cap failed, with the reason; a later fire starts its run once there is room', async () => {
    const { url, composition, backend } = app();
    const tenant = 'Fires';
    // A yearly expression: the test's own ticks are its only fires.
    const schedule = await composition.schedules.create(tenant, { agent_id: 'slow', cron_expr: '0 0 1 1 *' });
    const fire = createScheduleFirer({ store: backend.store, scheduler: backend.scheduler, runControl: composition.runs, logger: createLogger('silent') });
    const history = () => backend.store.schedules.listScheduleHistory(tenant, schedule.id);
    const { waiter } = await fill(url, tenant);
    const sessionsBefore = await sessionsOf(url, tenant);
    const due = Date.now();
    await fire({ tenant, schedule_id: schedule.id, due_ms: due });
    expect(await history()).toEqual([expect.objectContaining({ status: 'failed', error: expect.stringMatching(/waiting for a worker/) })]);
    expect((await history())[0]!.run_id).toBeUndefined();
    expect(await sessionsOf(url, tenant)).toEqual(sessionsBefore);
    await drain(url, tenant, waiter);
    await fire({ tenant, schedule_id: schedule.id, due_ms: due + 60_000 });
    const records = await waitFor('the later fire’s run completed', async () => {
      const records = await history();
      return records[0]?.status === 'completed' && records;
    }, 60_000);
    expect(records.map((r) => r.status)).toEqual(['completed', 'failed']);
    expect(await statusOf(url, tenant, records[0]!.run_id!)).toBe('completed');
  });

  it('never refuses the resume after an approval, and runs it before the tenant’s queued starts', async () => {
    const { url, backend } = app();
    const tenant = 'Resumes';
    const paused = await start(url, tenant, 'human-review', { topic: 'fair' });
    await waitFor('the run waits for its approval', async () => (await statusOf(url, tenant, paused)) === 'interrupted', 60_000);
    const { waiter, queued } = await fill(url, tenant);
    expectRefused(await post(`${url}/api/runs`, tenant, { agent_id: 'slow' }));
    const approval = (await get(`${url}/api/approval/pending?limit=500`, tenant)).body.pending.find((a: any) => a.run_id === paused);
    const answered = await post(`${url}/api/approval/respond`, tenant, { id: approval.id, approved: true });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    await drain(url, tenant, waiter);
    expect(await statusOf(url, tenant, paused)).toBe('completed');
    // The resume took the freed slot before the starts queued ahead of it.
    const events = (await backend.events.readAfter(tenant, '0-0', 10_000)).map(({ event }) => event);
    const decided = events.findIndex((e) => e.type === 'approval_decided' && e.run_id === paused);
    const resumed = events.findIndex((e, i) => i > decided && e.type === 'node_start' && e.run_id === paused);
    const firstStarts = queued.map((run) => events.findIndex((e) => e.type === 'node_start' && e.run_id === run));
    expect(decided).toBeGreaterThanOrEqual(0);
    expect(resumed).toBeGreaterThan(decided);
    for (const at of firstStarts) expect(at).toBeGreaterThan(resumed);
  });
}

describe('embedded backend', () => {
  let app: TestApi;
  beforeAll(async () => {
    process.env.SLOW_NODE_MS = NODE_MS;
    app = await startTestApi({ env: { ...ENV, WORKER_CONCURRENCY: '4' }, secured: true, agents: new AgentRegistry(agents) });
  });
  afterAll(async () => {
    await app?.close();
    delete process.env.SLOW_NODE_MS;
  });
  scenarios(() => app);
});

describe('Redis backend with a worker process', () => {
  let redis: PrivateRedis;
  let app: TestApi;
  let worker: AgentProcess | undefined;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    app = await startTestApi({ redisUrl: redis.url, env: ENV, secured: true, agents: new AgentRegistry(agents) });
    worker = await startRunWorker(redis.url, app, { ...ENV, WORKER_CONCURRENCY: '4', SLOW_NODE_MS: NODE_MS });
  }, 180_000);
  afterAll(async () => {
    const code = await worker?.stop();
    await app?.close();
    await redis?.stop();
    expect(code).toBe(0);
  }, 180_000);
  scenarios(() => app);
});
