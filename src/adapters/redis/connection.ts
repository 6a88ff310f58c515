import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { HostPort, RedisConnection, TlsSettings } from '../../config-redis.js';

export type { RedisConnection };

/** A client of any mode: ioredis's `Redis` (one server, Sentinel) or `Cluster`. */
export type RedisClient = Redis | Cluster;

/** What one connection is for. */
export interface ClientRole {
  /** Shown by `CLIENT LIST` as `agentplane:<name>`. */
  name: string;
  /**
   * Retries of a command across reconnects before it fails; `null` waits for Redis forever
   * (BullMQ's and the subscriber's connections must).
   */
  maxRetriesPerRequest: number | null;
  /** Longest wait for one command's answer, in ms. @defaultValue none */
  commandTimeoutMs?: number;
  /**
   * Sharded pub/sub (SSUBSCRIBE) on a cluster: one subscriber connection per master, opened
   * when a channel of its slots is subscribed. @defaultValue false
   */
  shardedSubscriber?: boolean;
}

/** Reconnect pause: 50 ms doubling to 2 s. */
const retryStrategy = (attempt: number) => Math.min(50 * 2 ** attempt, 2000);

/**
 * Opens one connection (or, on a cluster, one client with a connection per node) in the
 * connection's mode: the one place agentplane creates Redis clients. A connection error event
 * never crashes the process; failures surface through failing commands and readiness.
 */
export function openRedis(connection: RedisConnection, role: ClientRole): RedisClient {
  const common: RedisOptions = {
    connectionName: `agentplane:${role.name}`,
    maxRetriesPerRequest: role.maxRetriesPerRequest,
    ...(role.commandTimeoutMs === undefined ? {} : { commandTimeout: role.commandTimeoutMs }),
  };
  const client = create(connection, role, common);
  client.on('error', () => {});
  return client;
}

function create(connection: RedisConnection, role: ClientRole, common: RedisOptions): RedisClient {
  switch (connection.mode) {
    case 'single':
      return new Redis(connection.url, {
        ...common,
        retryStrategy,
        // A CA file only matters to a TLS URL; rediss:// turns TLS on by itself.
        ...(connection.tls?.ca && connection.url.startsWith('rediss:') ? { tls: { ca: connection.tls.ca } } : {}),
      });
    case 'sentinel':
      return new Redis({
        ...common,
        ...connection.auth,
        sentinels: connection.sentinels,
        name: connection.name,
        retryStrategy,
        sentinelRetryStrategy: retryStrategy,
        // Moves to the new master as soon as the Sentinels announce it (+switch-master).
        failoverDetector: true,
        ...(connection.sentinelPassword ? { sentinelPassword: connection.sentinelPassword } : {}),
        ...(connection.tls ? { tls: tlsOptions(connection.tls), enableTLSForSentinelMode: true } : {}),
        ...(connection.sentinelTls ? { sentinelTLS: tlsOptions(connection.sentinelTls) } : {}),
      });
    case 'cluster': {
      const options: ClusterOptions = {
        redisOptions: { ...common, ...connection.auth, ...(connection.tls ? { tls: tlsOptions(connection.tls) } : {}) },
        clusterRetryStrategy: retryStrategy,
        shardedSubscribers: role.shardedSubscriber ?? false,
      };
      return new Cluster(connection.nodes, options);
    }
  }
}

function tlsOptions(tls: TlsSettings): { ca?: string } {
  return tls.ca ? { ca: tls.ca } : {};
}

/** True for a Redis Cluster client. */
export function isCluster(client: RedisClient): client is Cluster {
  return (client as Cluster).isCluster === true;
}

/** The connection as a log can show it: no password. */
export function describeConnection(connection: RedisConnection): string {
  const list = (nodes: HostPort[]) => nodes.map((n) => `${n.host}:${n.port}`).join(',');
  switch (connection.mode) {
    case 'single':
      return redactedUrl(connection.url);
    case 'cluster':
      return `the Redis Cluster of ${list(connection.nodes)}`;
    case 'sentinel':
      return `the master "${connection.name}" of the Sentinels ${list(connection.sentinels)}`;
  }
}

function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'REDIS_URL';
  }
}

/**
 * PING on every master the client knows (a cluster's, each within the command timeout), and
 * on a cluster `cluster_state:ok`: what readiness asks. A master that is down, or a cluster
 * that has not yet promoted its replica, fails it.
 */
export async function pingAll(client: RedisClient): Promise<void> {
  if (!isCluster(client)) {
    await client.ping();
    return;
  }
  const nodes = masters(client);
  if (nodes.length === 0 || client.status !== 'ready') throw new Error('Connection is closed: no Redis Cluster master is known.');
  const info = String(await nodes[0]!.cluster('INFO'));
  if (!/^cluster_state:ok/m.test(info)) throw new Error('Connection is closed: the Redis Cluster is down (cluster_state is not ok).');
  await Promise.all(nodes.map((node) => node.ping()));
}

/** The server itself, or every master of a cluster: where per-server figures (INFO, DBSIZE) are summed. */
export function masters(client: RedisClient): Redis[] {
  return isCluster(client) ? client.nodes('master') : [client];
}
