import { afterAll, beforeAll } from 'vitest';
import { openRedis, type ClientRole, type RedisClient, type RedisConnection } from '../../src/adapters/redis/connection.js';
import { seedNodes, startRedisCluster, type TestRedisCluster } from '../../scripts/dev/redis-cluster.js';
// Its afterAll kills the file's leftover redis-server children, the cluster's nodes among them.
import './redis.js';

export { replicaPorts, seedNodes, startRedisCluster, startRedisSentinel } from '../../scripts/dev/redis-cluster.js';
export type { FailoverOptions, RedisClusterOptions, RedisSentinelOptions, TestRedisCluster, TestRedisSentinel } from '../../scripts/dev/redis-cluster.js';

/**
 * One cluster for the test file (started in beforeAll, stopped in afterAll) and a way to open
 * clients on it, through the application's connection factory, that are all disconnected at
 * the end.
 */
export function useRedisCluster(): { open(role?: Partial<ClientRole>): RedisClient; connection(): RedisConnection; cluster(): TestRedisCluster } {
  let cluster: TestRedisCluster | undefined;
  const clients: RedisClient[] = [];
  beforeAll(async () => {
    cluster = await startRedisCluster();
  }, 60_000);
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await cluster?.stop();
  });
  const started = () => {
    if (!cluster) throw new Error('useRedisCluster(): only available inside tests and hooks.');
    return cluster;
  };
  const connection = (): RedisConnection => ({ mode: 'cluster', nodes: seedNodes(started().nodes), auth: {} });
  return {
    cluster: started,
    connection,
    open(role: Partial<ClientRole> = {}) {
      const client = openRedis(connection(), { name: 'test', maxRetriesPerRequest: 3, ...role });
      clients.push(client);
      return client;
    },
  };
}
