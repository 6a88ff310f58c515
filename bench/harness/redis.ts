import type { Redis } from 'ioredis';
import { openRedis, type RedisClient, type RedisConnection } from '../../src/adapters/redis/connection.js';
import { seedNodes, startRedisCluster } from '../../scripts/dev/redis-cluster.js';
import { startRedisServer } from './processes.js';

/** The Redis a benchmark runs on: one redis-server, or a Redis Cluster of six (`--redis-cluster`). */
export interface BenchRedis {
  /** `redis-server` or `Redis Cluster (3 masters + 3 replicas)`. */
  name: string;
  /** The variables that point a process at it (REDIS_URL, or REDIS_CLUSTER_NODES). */
  env: Record<string, string>;
  connection: RedisConnection;
  /** Process ids of its servers (their CPU counts as Redis's). */
  pids(): number[];
  /** A client of the benchmark itself, disconnected by {@link BenchRedis.stop}. */
  client(name: string, role?: { shardedSubscriber?: boolean }): RedisClient;
  /** Disconnects the clients and stops the servers; safe to call twice. */
  stop(): Promise<void>;
}

/** The server's version from INFO (`7.2.4`), `unknown` when it does not say. */
export async function redisVersion(client: RedisClient | Redis): Promise<string> {
  return /redis_version:(\S+)/.exec(await client.info('server'))?.[1] ?? 'unknown';
}

/**
 * Starts the Redis of a benchmark: a private redis-server, or (cluster) six cluster-enabled
 * redis-server processes joined by `redis-cli --cluster create` (the harness of
 * scripts/dev/redis-cluster.ts, which the tests use too).
 */
export async function startBenchRedis(cluster: boolean): Promise<BenchRedis> {
  const clients: RedisClient[] = [];
  const track = (connection: RedisConnection) => (name: string, role: { shardedSubscriber?: boolean } = {}) => {
    const client = openRedis(connection, { name, maxRetriesPerRequest: 3, ...role });
    clients.push(client);
    return client;
  };
  const once = (stopServers: () => Promise<unknown>) => {
    let stopping: Promise<void> | undefined;
    return () =>
      (stopping ??= (async () => {
        clients.forEach((c) => c.disconnect());
        await stopServers();
      })());
  };
  if (!cluster) {
    const server = await startRedisServer();
    const connection: RedisConnection = { mode: 'single', url: server.url };
    return {
      name: 'redis-server',
      env: { REDIS_URL: server.url },
      connection,
      pids: () => [server.pid],
      client: track(connection),
      stop: once(() => server.stop()),
    };
  }
  const servers = await startRedisCluster();
  const connection: RedisConnection = { mode: 'cluster', nodes: seedNodes(servers.nodes), auth: {} };
  return {
    name: 'Redis Cluster (3 masters + 3 replicas)',
    env: { REDIS_CLUSTER_NODES: servers.nodes },
    connection,
    pids: () => servers.servers.flatMap((s) => s.pid() ?? []),
    client: track(connection),
    stop: once(() => servers.stop()),
  };
}
