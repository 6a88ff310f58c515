import { afterAll, beforeAll, expect, it } from 'vitest';
import { startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';
import { uniquePrefix } from '../support/redis.js';
import { expectFailoverSurvived, startFailoverProcesses, type FailoverProcesses } from './failover.js';

/**
 * A Redis Cluster master killed (SIGKILL) under load: the master of BullMQ's slot and of one
 * tenant's, while two API replicas start runs of that tenant and of one on another master, hold
 * their event streams open, and two worker processes execute. One of its two replicas is
 * promoted; nothing is restarted.
 */
let cluster: TestRedisCluster;
let processes: FailoverProcesses | undefined;
let tenants: string[] = [];
let prefix: string;

beforeAll(async () => {
  // Two replicas per master: the promoted one keeps one, so writes are still confirmed (REDIS_WAIT_REPLICAS=1).
  cluster = await startRedisCluster({ replicas: 2 });
  prefix = uniquePrefix('failover');
  // The first tenant shares its master with the queues ({prefix}): the one killed.
  tenants = await cluster.namesOnDistinctMasters('tenant', 2, `{${prefix}}`);
  processes = await startFailoverProcesses({ REDIS_CLUSTER_NODES: cluster.nodes, SERVICE_KEY_PREFIX: prefix }, tenants);
}, 90_000);

afterAll(async () => {
  const unclean = (await processes?.stop()) ?? [];
  await cluster?.stop();
  expect(unclean).toEqual([]);
});

it('keeps every acknowledged run, every stream event and truthful readiness through a master failover', async () => {
  await expectFailoverSurvived(processes!, tenants, async (beforeKill) => {
    // Killed while it holds writes its replicas lack: only what they confirmed was acknowledged.
    const { killed, promoted } = await cluster.failover(`{${prefix}}`, { unreplicated: true, beforeKill });
    expect(promoted).not.toBe(killed);
    expect(await cluster.masterOf(tenants[0]!)).toBe(promoted);
  });
}, 240_000);
