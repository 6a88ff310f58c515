import { afterAll, beforeAll, expect, it } from 'vitest';
import agents from '../fixtures/agents.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { startRunWorker } from '../runs/backends.js';
import { startTestApi, type TestApi } from '../support/app.js';
import type { AgentProcess } from '../support/processes.js';
import { startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';
import { uniquePrefix } from '../support/redis.js';
import { failoverUnderLoad } from './failover.js';

/**
 * A Redis Cluster master killed (SIGKILL) under load: the master of BullMQ's slot and of one
 * tenant's, while two API replicas start runs of that tenant and of one on another master, hold
 * their event streams open, and two worker processes execute. Its replica is promoted; nothing
 * is restarted.
 */
let cluster: TestRedisCluster;
let apis: TestApi[] = [];
let workers: AgentProcess[] = [];
let tenants: string[] = [];
let prefix: string;
const headers = (tenant: string) => ({ 'X-Api-Key': `key-${tenant}-0b7a` });

beforeAll(async () => {
  cluster = await startRedisCluster();
  prefix = uniquePrefix('failover');
  const env = { REDIS_CLUSTER_NODES: cluster.nodes, SERVICE_KEY_PREFIX: prefix };
  // The first tenant shares its master with the queues ({prefix}): the one killed.
  tenants = await cluster.namesOnDistinctMasters('tenant', 2, `{${prefix}}`);
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
  await cluster?.stop();
  expect(codes).toEqual(codes.map(() => 0));
});

it('keeps every acknowledged run, every stream event and truthful readiness through a master failover', async () => {
  const report = await failoverUnderLoad({
    apis,
    tenants,
    headers,
    probed: [...apis.map((api, i) => ({ name: `api-${i}`, url: api.url })), ...workers.map((w, i) => ({ name: `worker-${i}`, url: w.url }))],
    failover: async () => {
      const { killed, promoted } = await cluster.failover(`{${prefix}}`);
      expect(promoted).not.toBe(killed);
      expect(await cluster.masterOf(tenants[0]!)).toBe(promoted);
    },
  });
  // While the master was away every process said so.
  for (const [name, seen] of Object.entries(report.readiness)) expect(seen.during, name).toContain(503);
}, 240_000);
