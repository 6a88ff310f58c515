import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import agents from '../fixtures/agents.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/**
 * What a tenant sees of its run queue, on both backends: `GET /api/queue` (its runs waiting and
 * running, with its caps; another tenant's runs never counted), and the `queue` of a pending
 * LangGraph run, as `GET /api/runs/{id}` shows it for a queued run.
 */

const KEYS = { acme: 'key-acme-0123456789abcdef', other: 'key-other-0123456789abcdef' } as const;
type Tenant = keyof typeof KEYS;
const ENV = {
  SERVICE_AUTH: 'apikey',
  SERVICE_API_KEYS: `${KEYS.acme}:admin:acme,${KEYS.other}:viewer:other`,
  SERVICE_RATE_LIMIT: 'off',
  SERVICE_TENANT_MAX_QUEUED: '50',
  SERVICE_TENANTS: JSON.stringify({ acme: { max_running: 3 } }),
  WORKER_CONCURRENCY: '1',
};
const as = (tenant: Tenant) => ({ 'X-Api-Key': KEYS[tenant] });

function scenarios(app: () => TestApi, holdSlot: (url: string) => Promise<number>, workers: number): void {
  it('answers the tenant’s queued and running runs with its caps, and a pending LangGraph run carries its queue', async () => {
    const { url } = app();
    const running = await holdSlot(url);
    const native = await call(`${url}/api/runs`, { method: 'POST', headers: as('acme'), json: { agent_id: 'slow' } });
    expect(native.status, JSON.stringify(native.body)).toBe(202);
    const thread = await call(`${url}/threads`, { method: 'POST', headers: as('acme'), json: {} });
    expect(thread.status, JSON.stringify(thread.body)).toBe(200);
    const created = await call(`${url}/threads/${thread.body.thread_id}/runs`, { method: 'POST', headers: as('acme'), json: { assistant_id: 'slow', input: {} } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const queue = { tenant_queued: 2, tenant_running: running, workers };
    expect(created.body).toMatchObject({ status: 'pending', queue });

    const answer = await call(`${url}/api/queue`, { headers: as('acme') });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toEqual({ tenant: 'acme', queued: 2, running, max_queued: 50, max_running: 3 });
    const read = await call(`${url}/threads/${thread.body.thread_id}/runs/${created.body.run_id}`, { headers: as('acme') });
    expect(read.body).toMatchObject({ status: 'pending', queue });
    expect((await call(`${url}/api/runs/${native.body.run_id}`, { headers: as('acme') })).body.queue).toEqual(queue);
    // Another tenant (a viewer may read it) sees its own queue only.
    expect((await call(`${url}/api/queue`, { headers: as('other') })).body).toEqual({ tenant: 'other', queued: 0, running: 0, max_queued: 50, max_running: 0 });

    // Cancelled, the LangGraph run leaves the queue and shows none.
    expect((await call(`${url}/threads/${thread.body.thread_id}/runs/${created.body.run_id}/cancel`, { method: 'POST', headers: as('acme') })).status).toBe(202);
    await waitFor('the run cancelled', async () => (await call(`${url}/api/queue`, { headers: as('acme') })).body.queued === 1);
    const ended = await call(`${url}/threads/${thread.body.thread_id}/runs/${created.body.run_id}`, { headers: as('acme') });
    expect(ended.body.status).not.toBe('pending');
    expect(ended.body).not.toHaveProperty('queue');
    await call(`${url}/api/runs/${native.body.run_id}/cancel`, { method: 'POST', headers: as('acme') });
  });
}

describe('embedded backend (one slot, held)', () => {
  let app: TestApi;
  beforeAll(async () => {
    process.env.SLOW_NODE_MS = '60000';
    app = await startTestApi({ env: { ...ENV, SERVICE_SHUTDOWN_TIMEOUT_MS: '1000' }, secured: true, agents: new AgentRegistry(agents) });
  });
  afterAll(async () => {
    await app?.close();
    delete process.env.SLOW_NODE_MS;
  });
  scenarios(
    () => app,
    async (url) => {
      const started = await call(`${url}/api/runs`, { method: 'POST', headers: as('acme'), json: { agent_id: 'slow' } });
      expect(started.status).toBe(202);
      await waitFor('the slow run holds the slot', async () => (await app.backend.queue.depth('acme')).running === 1);
      return 1;
    },
    1,
  );
});

describe('Redis backend with no worker alive (every run waits)', () => {
  let redis: TestRedis;
  let app: TestApi;
  beforeAll(async () => {
    redis = await startRedis();
    app = await startTestApi({ redisUrl: redis.url, env: ENV, secured: true, agents: new AgentRegistry(agents) });
  });
  afterAll(async () => {
    await app?.close();
    await redis?.stop();
  });
  scenarios(
    () => app,
    async () => 0,
    0,
  );
});
