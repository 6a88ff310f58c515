import { afterAll, beforeAll, expect, it } from 'vitest';
import agents from '../fixtures/agents.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { startRunWorker } from '../runs/backends.js';
import { startTestApi, type TestApi } from '../support/app.js';
import type { AgentProcess } from '../support/processes.js';
import { startRedisSentinel, type TestRedisSentinel } from '../support/redis-cluster.js';
import { uniquePrefix } from '../support/redis.js';
import { failoverUnderLoad } from './failover.js';

/**
 * A Sentinel set (one master, one replica, three sentinels, passwords on data nodes and
 * sentinels): every process finds the master through REDIS_SENTINELS; the master is killed
 * (SIGKILL) under load and the sentinels promote the replica; nothing is restarted.
 */
let sentinel: TestRedisSentinel;
let apis: TestApi[] = [];
let workers: AgentProcess[] = [];
const tenants = ['tenant-a', 'tenant-c'];
const headers = (tenant: string) => ({ 'X-Api-Key': `key-${tenant}-5e2d` });

beforeAll(async () => {
  sentinel = await startRedisSentinel();
  const env = {
    REDIS_SENTINELS: sentinel.sentinels,
    REDIS_SENTINEL_NAME: sentinel.name,
    REDIS_PASSWORD: sentinel.password,
    REDIS_SENTINEL_PASSWORD: sentinel.sentinelPassword,
    SERVICE_KEY_PREFIX: uniquePrefix('sentinel'),
  };
  const secured = {
    ...env,
    SERVICE_AUTH: 'apikey',
    SERVICE_API_KEYS: tenants.map((t) => `${headers(t)['X-Api-Key']}:user:${t}`).join(','),
    SERVICE_RATE_LIMIT: 'off',
  };
  const registry = new AgentRegistry(agents);
  apis = await Promise.all(['a', 'b'].map((id) => startTestApi({ env: { ...secured, SERVICE_REPLICA_ID: id }, secured: true, agents: registry })));
  // The reaper settles a run whose job was lost with the master within seconds; a worker's
  // graceful shutdown is bounded well inside the 15 s stop() allows before SIGKILL.
  workers = await Promise.all([0, 1].map(() => startRunWorker(env, apis[0]!, { SLOW_NODE_MS: '300', RUN_REAPER_INTERVAL_MS: '2000', SERVICE_SHUTDOWN_TIMEOUT_MS: '5000' })));
}, 90_000);

afterAll(async () => {
  const codes = await Promise.all(workers.map((w) => w.stop()));
  await Promise.all(apis.map((api) => api.close()));
  await sentinel?.stop();
  expect(codes).toEqual(codes.map(() => 0));
});

it('keeps every acknowledged run, every stream event and truthful readiness through a Sentinel failover', async () => {
  const report = await failoverUnderLoad({
    apis,
    tenants,
    headers,
    probed: [...apis.map((api, i) => ({ name: `api-${i}`, url: api.url })), ...workers.map((w, i) => ({ name: `worker-${i}`, url: w.url }))],
    failover: async () => {
      const { killed, promoted } = await sentinel.failover();
      expect(promoted).not.toBe(killed);
    },
  });
  // While the master was away every process said so.
  for (const [name, seen] of Object.entries(report.readiness)) expect(seen.during, name).toContain(503);
}, 240_000);
