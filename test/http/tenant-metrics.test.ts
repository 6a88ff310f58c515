import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import agents from '../fixtures/agents.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { parsePrometheus } from '../support/http.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/**
 * `agentplane_tenant_runs_queued{tenant}` and `agentplane_tenant_runs_running{tenant}` on both
 * backends: the SERVICE_METRICS_TENANTS busiest tenants by queued + running, each with its
 * label, and `(other)` summing the rest; read at scrape time, so a run's end shows at once.
 * The second busiest tenant is named `other`: a tenant id cannot hold `(`, so its row and the
 * overflow row stay apart.
 */

/** The overflow row's label (docs/reference/metrics.md); not a tenant id (CONTRACT: `^[A-Za-z0-9._:-]{1,128}$`). */
const OVERFLOW = '(other)';
const TENANTS = ['alpha', 'other', 'charlie', 'delta'] as const;
type Tenant = (typeof TENANTS)[number];
const key = (tenant: Tenant) => `key-${tenant}-0123456789abcdef`;
const ENV = {
  SERVICE_AUTH: 'apikey',
  SERVICE_API_KEYS: TENANTS.map((t) => `${key(t)}:admin:${t}`).join(','),
  SERVICE_RATE_LIMIT: 'off',
  SERVICE_METRICS_TENANTS: '2',
  WORKER_CONCURRENCY: '1',
};
/** Runs each tenant starts: alpha and other are the top two, charlie and delta are `(other)`. */
const STARTS: Record<Tenant, number> = { alpha: 4, other: 3, charlie: 1, delta: 1 };

type Gauges = Record<string, { queued: number; running: number }>;

async function gauges(url: string): Promise<Gauges> {
  const families = parsePrometheus(await (await fetch(`${url}/metrics`)).text());
  const rows: Gauges = {};
  for (const [name, field] of [
    ['agentplane_tenant_runs_queued', 'queued'],
    ['agentplane_tenant_runs_running', 'running'],
  ] as const) {
    const family = families.get(name);
    expect(family?.type, name).toBe('GAUGE');
    for (const sample of family!.metrics) {
      expect(Object.keys(sample.labels ?? {}), name).toEqual(['tenant']);
      const row = (rows[sample.labels!.tenant!] ??= { queued: 0, running: 0 });
      row[field] = Number(sample.value);
    }
  }
  return rows;
}

function scenarios(app: () => TestApi, running: number): void {
  it('labels the busiest tenants, a tenant named "other" among them, and sums the rest under "(other)"', async () => {
    const { url } = app();
    const runs: { tenant: Tenant; id: string }[] = [];
    for (const tenant of TENANTS) {
      for (let i = 0; i < STARTS[tenant]; i += 1) {
        const started = await call(`${url}/api/runs`, { method: 'POST', headers: { 'X-Api-Key': key(tenant) }, json: { agent_id: 'slow' } });
        expect(started.status, JSON.stringify(started.body)).toBe(202);
        runs.push({ tenant, id: started.body.run_id });
      }
      // The first run (embedded: alpha's) holds the one slot before the others come.
      if (running > 0 && tenant === 'alpha') {
        await waitFor('alpha’s first run admitted', async () => (await app().backend.queue.depth('alpha')).running === running);
      }
    }
    expect(await gauges(url)).toEqual({
      alpha: { queued: STARTS.alpha - running, running },
      other: { queued: STARTS.other, running: 0 },
      [OVERFLOW]: { queued: STARTS.charlie + STARTS.delta, running: 0 },
    });
    // Cancelled, other's runs leave the top: charlie takes its place (ties by name), delta is "(other)".
    for (const run of runs.filter((r) => r.tenant === 'other')) {
      const cancelled = await call(`${url}/api/runs/${run.id}/cancel`, { method: 'POST', headers: { 'X-Api-Key': key('other') } });
      expect(cancelled.status).toBe(200);
    }
    await waitFor('the tenant other gone from the gauges', async () => !('other' in (await gauges(url))));
    expect(await gauges(url)).toEqual({
      alpha: { queued: STARTS.alpha - running, running },
      charlie: { queued: 1, running: 0 },
      [OVERFLOW]: { queued: 1, running: 0 },
    });
    for (const run of runs.filter((r) => r.tenant !== 'other')) {
      await call(`${url}/api/runs/${run.id}/cancel`, { method: 'POST', headers: { 'X-Api-Key': key(run.tenant) } });
    }
  });
}

describe('embedded backend (one slot)', () => {
  let app: TestApi;
  let off: TestApi;
  beforeAll(async () => {
    // alpha's first run holds the slot for the whole test; closing does not wait for it.
    process.env.SLOW_NODE_MS = '60000';
    app = await startTestApi({ env: { ...ENV, SERVICE_SHUTDOWN_TIMEOUT_MS: '1000' }, secured: true, agents: new AgentRegistry(agents) });
    off = await startTestApi({ env: { ...ENV, SERVICE_METRICS_TENANTS: '0' }, secured: true, agents: new AgentRegistry(agents) });
  });
  afterAll(async () => {
    await app?.close();
    await off?.close();
    delete process.env.SLOW_NODE_MS;
  });
  scenarios(() => app, 1);

  it('has no per-tenant gauges with SERVICE_METRICS_TENANTS=0', async () => {
    const text = await (await fetch(`${off.url}/metrics`)).text();
    expect(text).toContain('agentplane_approvals_pending');
    expect(text).not.toContain('agentplane_tenant_runs');
  });
});

describe('Redis backend, the API scraping the shared counts (no worker alive: every run waits)', () => {
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
  scenarios(() => app, 0);
});
