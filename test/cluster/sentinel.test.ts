import { afterAll, beforeAll, expect, it } from 'vitest';
import { startRedisSentinel, type TestRedisSentinel } from '../support/redis-cluster.js';
import { uniquePrefix } from '../support/redis.js';
import { failoverUnderLoad, startFailoverProcesses, type FailoverProcesses } from './failover.js';

/**
 * A Sentinel set (one master, one replica, three sentinels, passwords on data nodes and
 * sentinels): every process finds the master through REDIS_SENTINELS; the master is killed
 * (SIGKILL) under load and the sentinels promote the replica; nothing is restarted.
 */
let sentinel: TestRedisSentinel;
let processes: FailoverProcesses | undefined;
const tenants = ['tenant-a', 'tenant-c'];

beforeAll(async () => {
  sentinel = await startRedisSentinel();
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
  const codes = (await processes?.stop()) ?? [];
  await sentinel?.stop();
  expect(codes).toEqual(codes.map(() => 0));
});

it('keeps every acknowledged run, every stream event and truthful readiness through a Sentinel failover', async () => {
  const report = await failoverUnderLoad({
    apis: processes!.apis,
    tenants,
    headers: processes!.headers,
    probed: processes!.probed(),
    failover: async () => {
      const { killed, promoted } = await sentinel.failover();
      expect(promoted).not.toBe(killed);
    },
  });
  // While the master was away every process said so.
  for (const [name, seen] of Object.entries(report.readiness)) expect(seen.during, name).toContain(503);
}, 240_000);
