import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import agents from '../fixtures/agents.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import type { AgentProcess } from '../support/processes.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { startRunWorker } from './backends.js';

/** One key per tenant (API keys carry the tenant). */
const TENANTS = ['TenantA', 'TenantB', 'TenantC', 'TenantD', 'TenantE', 'TenantF'] as const;
type Tenant = (typeof TENANTS)[number];
const KEYS = TENANTS.map((t) => `key-${t.toLowerCase()}-0123456789abcdef`);
const ENV = {
  SERVICE_AUTH: 'apikey',
  SERVICE_API_KEYS: TENANTS.map((t, i) => `${KEYS[i]}:admin:${t}`).join(','),
  SERVICE_RATE_LIMIT: 'off',
  // TenantF's queue holds at most 2 runs.
  SERVICE_TENANTS: JSON.stringify({ TenantF: { max_queued: 2 } }),
};
/** The slow test agent's node: each run holds a slot about this long. */
const NODE_MS = '300';
const SLOTS = 4;

const as = (tenant: Tenant) => ({ 'X-Api-Key': KEYS[TENANTS.indexOf(tenant)]! });
const start = async (url: string, tenant: Tenant, agent = 'slow'): Promise<string> => {
  const started = await call(`${url}/api/runs`, { method: 'POST', headers: as(tenant), json: { agent_id: agent } });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  return started.body.run_id as string;
};

/** The time each run of the tenant started (its first node_start), in order of start. */
async function starts(app: TestApi, tenant: Tenant): Promise<{ run: string; at: number }[]> {
  const events = await app.backend.events.readAfter(tenant, '0-0', 10_000);
  const first = new Map<string, number>();
  for (const { event } of events) if (event.type === 'node_start' && !first.has(event.run_id)) first.set(event.run_id, Date.parse(event.ts));
  return [...first].map(([run, at]) => ({ run, at })).sort((a, b) => a.at - b.at);
}

function scenarios(app: () => TestApi): void {
  it('starts a second tenant’s run within one turnover while the first tenant’s backlog waits', async () => {
    const { url } = app();
    const flood: string[] = [];
    for (let i = 0; i < 120; i += 1) flood.push(await start(url, 'TenantA'));
    const posted = Date.now();
    const b = await start(url, 'TenantB');
    await waitFor('B’s run completed', async () => (await call(`${url}/api/runs/${b}`, { headers: as('TenantB') })).body.status === 'completed', 60_000);
    const bStart = (await starts(app(), 'TenantB'))[0]!.at;
    const aBetween = (await starts(app(), 'TenantA')).filter((s) => s.at >= posted && s.at < bStart).length;
    // First in first out, A's whole backlog would start before B; fairly, B takes the next slot that frees.
    expect(aBetween).toBeLessThan(SLOTS);
    // A's queue is visible, and its cancelled queued runs give their places back.
    const depth = await call(`${url}/api/runs/${flood.at(-1)!}`, { headers: as('TenantA') });
    expect(depth.body).toMatchObject({ status: 'queued', queue: { tenant_queued: expect.any(Number) } });
    expect(depth.body.queue.tenant_queued).toBeGreaterThan(50);
    for (const run of flood) await call(`${url}/api/runs/${run}/cancel`, { method: 'POST', headers: as('TenantA') });
    await waitFor('A’s queue empty', async () => (await call(`${url}/api/runs/${flood.at(-1)!}`, { headers: as('TenantA') })).body.status === 'cancelled');
  }, 180_000);

  it('gives tenants flooding one after the other equal shares of the slots (±10 %)', async () => {
    const { url } = app();
    const tenants = ['TenantC', 'TenantD', 'TenantE'] as const;
    for (const tenant of tenants) for (let i = 0; i < 40; i += 1) await start(url, tenant);
    await waitFor('every run started', async () => (await Promise.all(tenants.map((t) => starts(app(), t)))).every((s) => s.length === 40), 120_000);
    const all = (await Promise.all(tenants.map(async (t) => (await starts(app(), t)).map((s) => ({ ...s, tenant: t }))))).flat();
    all.sort((x, y) => x.at - y.at);
    // The first slots went to C alone (nobody else was waiting); then a window of 60 starts.
    const window = all.slice(SLOTS * 2, SLOTS * 2 + 60);
    for (const tenant of tenants) {
      const share = window.filter((s) => s.tenant === tenant).length;
      expect(share, `${tenant}'s starts in the window`).toBeGreaterThanOrEqual(18);
      expect(share, `${tenant}'s starts in the window`).toBeLessThanOrEqual(22);
    }
  }, 180_000);

  it('refuses a start past the tenant’s queued cap with 429 and Retry-After, storing nothing', async () => {
    const { url } = app();
    // Every slot held by another tenant's runs until they are cancelled: F's runs can only wait.
    const held: string[] = [];
    for (let i = 0; i < SLOTS; i += 1) held.push(await start(url, 'TenantC', 'waiter'));
    const status = async (run: string) => (await call(`${url}/api/runs/${run}`, { headers: as('TenantC') })).body.status as string;
    await waitFor('every slot held', async () => (await Promise.all(held.map(status))).every((s) => s === 'running'), 60_000);
    await start(url, 'TenantF');
    await start(url, 'TenantF');
    const sessionsBefore = (await call(`${url}/api/sessions?limit=500`, { headers: as('TenantF') })).body;
    const refused = await call(`${url}/api/runs`, { method: 'POST', headers: as('TenantF'), json: { agent_id: 'slow', session_id: 'refused-one' } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.body.error).toMatchObject({ code: 'rate_limited', message: expect.stringMatching(/waiting for a worker/) });
    expect((await call(`${url}/api/sessions?limit=500`, { headers: as('TenantF') })).body).toEqual(sessionsBefore);
    // Another tenant is not refused.
    await start(url, 'TenantD');
    for (const run of held) await call(`${url}/api/runs/${run}/cancel`, { method: 'POST', headers: as('TenantC') });
    await waitFor('the held runs cancelled', async () => (await Promise.all(held.map(status))).every((s) => s === 'cancelled'), 60_000);
  });
}

describe('embedded backend', () => {
  let app: TestApi;
  beforeAll(async () => {
    process.env.SLOW_NODE_MS = NODE_MS;
    app = await startTestApi({ env: { ...ENV, WORKER_CONCURRENCY: String(SLOTS) }, secured: true, agents: new AgentRegistry(agents) });
  });
  afterAll(async () => {
    await app?.close();
    delete process.env.SLOW_NODE_MS;
  });
  scenarios(() => app);
});

describe('Redis backend with two worker processes', () => {
  let redis: PrivateRedis;
  let app: TestApi;
  let workers: AgentProcess[] = [];
  beforeAll(async () => {
    redis = await startPrivateRedis();
    app = await startTestApi({ redisUrl: redis.url, env: ENV, secured: true, agents: new AgentRegistry(agents) });
    const env = { ...ENV, WORKER_CONCURRENCY: String(SLOTS / 2), SLOW_NODE_MS: NODE_MS };
    workers = await Promise.all([startRunWorker(redis.url, app, env), startRunWorker(redis.url, app, env)]);
  }, 180_000);
  afterAll(async () => {
    const codes = await Promise.all(workers.map((w) => w.stop()));
    await app?.close();
    await redis?.stop();
    expect(codes).toEqual([0, 0]);
  }, 180_000);
  scenarios(() => app);
});
