import { Cluster, Redis, SentinelConnector, type ClusterOptions, type RedisOptions, type SentinelConnectionOptions } from 'ioredis';
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
 * A write refused by a server that is a replica now (a master demoted behind the client's back:
 * a failover the connection survived, a DNS name moved to another server): reconnect. In
 * Sentinel mode the reconnect asks the Sentinels for the master, so the command is sent again
 * there (2); a URL may still name the replica, so there the command fails (1, a 503) rather
 * than loop.
 */
const reconnectOnReadonly =
  (then: 1 | 2) =>
  (error: Error): false | 1 | 2 =>
    /^READONLY\b/.test(error.message) ? then : false;

/** Longest wait for a Sentinel's answer while looking up the master; then the next Sentinel is asked. */
const SENTINEL_COMMAND_TIMEOUT_MS = 2_000;

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
  coalesceWrites(client);
  return client;
}

/**
 * The commands a connection sends together (in one stretch of synchronous code, or in promise
 * continuations run one after another) leave in one write: the socket is corked at the first
 * write and uncorked on process.nextTick, which Node runs once that code is done. The
 * commands one step sends back to back (BullMQ's add and the hand mark, a release and BullMQ's
 * completion of the job, a span and its event) then share a write syscall and a read in Redis:
 * on loopback a write is the most expensive thing a command does. Not held to the end of the
 * event loop's turn (setImmediate): batching the commands of concurrent requests that way moved
 * one connection's writes after another's that were sent later in the same turn, and
 * LangGraph's `multitask_strategy: rollback` then saw a rolled-back run's state (its own suite,
 * on Redis). Unlike ioredis's auto-pipelining, nothing waits for a reply in flight and no
 * Pipeline is built. The order of one connection's commands is unchanged.
 */
function coalesceWrites(client: RedisClient): void {
  const patch = (redis: Redis) =>
    redis.on('connect', () => {
      const stream = (redis as unknown as { stream?: CorkableStream }).stream;
      if (stream && !stream[COALESCING]) coalesce(stream);
    });
  if (isCluster(client)) client.on('+node', patch);
  else patch(client);
}

const COALESCING = Symbol('agentplane.coalescing');

interface CorkableStream {
  write: (...args: unknown[]) => boolean;
  cork(): void;
  uncork(): void;
  [COALESCING]?: true;
}

function coalesce(stream: CorkableStream): void {
  const write = stream.write;
  let corked = false;
  const uncork = () => {
    corked = false;
    stream.uncork();
  };
  stream[COALESCING] = true;
  stream.write = function (this: CorkableStream, ...args: unknown[]) {
    if (!corked) {
      corked = true;
      stream.cork();
      process.nextTick(uncork);
    }
    return write.apply(this, args);
  };
}

function create(connection: RedisConnection, role: ClientRole, common: RedisOptions): RedisClient {
  switch (connection.mode) {
    case 'single':
      return new Redis(connection.url, {
        ...common,
        retryStrategy,
        reconnectOnError: reconnectOnReadonly(1),
        // A CA file only matters to a TLS URL; rediss:// turns TLS on by itself.
        ...(connection.tls?.ca && connection.url.startsWith('rediss:') ? { tls: { ca: connection.tls.ca } } : {}),
      });
    case 'sentinel':
      return new Redis({
        ...common,
        ...connection.auth,
        sentinels: connection.sentinels,
        name: connection.name,
        // The master only: a node that answers INFO as a replica is dropped and the Sentinels asked again.
        role: 'master',
        retryStrategy,
        sentinelRetryStrategy: retryStrategy,
        sentinelCommandTimeout: SENTINEL_COMMAND_TIMEOUT_MS,
        reconnectOnError: reconnectOnReadonly(2),
        // Follows +switch-master itself (MasterFollower), not with ioredis's failover detector,
        // which can end a client for good. Copied into BullMQ's duplicates with the options.
        Connector: MasterFollower,
        failoverDetector: false,
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

/**
 * ioredis's Sentinel connector, with its own way of following the master when the old one stays
 * up (a manual failover, a partition): while a connection to the master is open, the Sentinels
 * are subscribed to `+switch-master`; when one announces a new address for this master, the
 * connection is closed, and the client reconnects through the Sentinels as after any lost
 * connection (commands in flight are sent again). A dead master's connections close by
 * themselves.
 *
 * ioredis's `failoverDetector` does the same by calling the connector's disconnect(), which
 * also aborts a reconnect in progress: when the announcement arrives while a client, its
 * master dead, is asking a Sentinel where the master is, that reconnect fails with
 * "Connection is closed" and the client never reconnects again (status "end"; seen on a busy
 * machine as an API that could not write after a failover). Here only the socket the
 * subscription belongs to is closed, so nothing else is affected.
 */
class MasterFollower extends SentinelConnector {
  /** ioredis passes the client's options (RedisOptions.Connector). */
  constructor(options: unknown) {
    super(options as SentinelConnectionOptions);
  }

  override async connect(eventEmitter: Parameters<SentinelConnector['connect']>[0]): ReturnType<SentinelConnector['connect']> {
    const stream = await super.connect(eventEmitter);
    const options = this.options;
    if (stream.connecting) stream.once(options.enableTLSForSentinelMode && options.tls ? 'secureConnect' : 'connect', () => followSwitches(stream, options));
    else followSwitches(stream, options);
    return stream;
  }
}

/** Closes `stream` when a Sentinel announces a new address for its master; subscribed while the stream is open. */
function followSwitches(stream: Awaited<ReturnType<SentinelConnector['connect']>>, options: SentinelConnectionOptions): void {
  if (stream.destroyed) return;
  const watchers = (options.sentinels ?? []).map((sentinel) => {
    const watcher = new Redis({
      host: sentinel.host ?? 'localhost',
      port: sentinel.port ?? 26379,
      ...(options.sentinelUsername ? { username: options.sentinelUsername } : {}),
      ...(options.sentinelPassword ? { password: options.sentinelPassword } : {}),
      ...(options.sentinelTLS ? { tls: options.sentinelTLS } : {}),
      enableReadyCheck: false,
      maxRetriesPerRequest: null,
      retryStrategy,
    });
    watcher.on('error', () => {});
    watcher.on('message', (_channel: string, message: string) => {
      // `<name> <old ip> <old port> <new ip> <new port>`; already on the new address: stay.
      const [name, , , host, port] = message.split(' ');
      if (name !== options.name || (host === stream.remoteAddress && Number(port) === stream.remotePort)) return;
      stream.destroy();
    });
    watcher.subscribe('+switch-master').catch(() => {});
    return watcher;
  });
  stream.once('close', () => watchers.forEach((watcher) => watcher.disconnect()));
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
 * on a cluster `cluster_state:ok` and a connected master for every slot the client routes: what
 * readiness asks. A master that is down, or a cluster that has not yet promoted its replica,
 * fails it. (A killed master leaves the client's nodes at once while its slots still route to
 * it, and the other nodes say `ok` until they agree it failed: only the routing shows it gone.)
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
  const connected = new Set(nodes.map((node) => `${node.options.host}:${node.options.port}`));
  const gone = [...new Set(client.slots.map((owners) => owners?.[0]))].find((owner) => owner !== undefined && !connected.has(owner));
  if (gone) throw new Error(`Connection is closed: slots of the Redis Cluster route to ${gone}, a master that is not connected.`);
  await Promise.all(nodes.map((node) => node.ping()));
}

/** The server itself, or every master of a cluster: where per-server figures (INFO, DBSIZE) are summed. */
export function masters(client: RedisClient): Redis[] {
  return isCluster(client) ? client.nodes('master') : [client];
}
