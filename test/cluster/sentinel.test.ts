import { afterAll, beforeAll, expect, it } from 'vitest';
import { startRedisSentinel, type TestRedisSentinel } from '../support/redis-cluster.js';
import { uniquePrefix } from '../support/redis.js';
import { expectFailoverSurvived, startFailoverProcesses, type FailoverProcesses } from './failover.js';

/**
 * A Sentinel set (one master, two replicas, three sentinels, passwords on data nodes and
 * sentinels): every process finds the master through REDIS_SENTINELS; the master is killed
 * (SIGKILL) under load and the sentinels promote a replica; nothing is restarted.
 */
let sentinel: TestRedisSentinel;
let processes: FailoverProcesses | undefined;
const tenants = ['tenant-a', 'tenant-c'];

beforeAll(async () => {
  // Two replicas: the promoted one keeps one, so writes are still confirmed (REDIS_WAIT_REPLICAS=1).
  sentinel = await startRedisSentinel({ replicas: 2 });
  processes = await startFailoverProcesses(
    {
      REDIS_SENTINELS: sentinel.sentinels,
      REDIS_SENTINEL_NAME: sentinel.name,
      REDIS_PASSWORD: sentinel.password,
      REDIS_SENTINEL_PASSWORD: sentinel.sentinelPassword,
      SERVICE_KEY_PREFIX: uniquePrefix('sentinel'),
    },
    tenants,
  );
}, 90_000);

afterAll(async () => {
  const unclean = (await processes?.stop()) ?? [];
  await sentinel?.stop();
  expect(unclean).toEqual([]);
});

it('keeps every acknowledged run, every stream event and truthful readiness through a Sentinel failover', async () => {
  await expectFailoverSurvived(processes!, tenants, async (beforeKill) => {
    // Killed while it holds writes its replicas lack: only what they confirmed was acknowledged.
    const { killed, promoted } = await sentinel.failover({ unreplicated: true, beforeKill });
    expect(promoted).not.toBe(killed);
  });
}, 240_000);
