import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { freePort, portIsFree, PortTakenError, startPrivateRedis, type PrivateRedis, type TlsFiles } from './redis-server.js';
import { waitFor } from './wait.js';

/*
 * A Redis Cluster and a Sentinel set of private redis-server processes on loopback, for the
 * tests (test/support/redis-cluster.ts, test/cluster/) and the benchmarks
 * (bench/harness/redis.ts, `--redis-cluster`) alike. Nothing here knows a test runner.
 */

/**
 * Failure detection of the test servers: a master silent this long is failed over. Short, so a
 * failover takes a few seconds; production clusters keep Redis's default (15 s).
 */
const NODE_TIMEOUT_MS = 1_000;

/**
 * The sentinels' `down-after-milliseconds`: longer than the cluster's node timeout, because a
 * sentinel that misses a second of PING replies from the master it just promoted (the whole
 * test suite starving two cores) fails over a second time, and the writes the first promoted
 * master had not yet sent its replica (events are not WAITed for) go with that second failover:
 * what the failover test would then report as lost, for a reason it does not test.
 */
const SENTINEL_DOWN_AFTER_MS = 3_000;

/** A real Redis Cluster on loopback: 3 masters with 1 (or more) replicas each, `redis-server --cluster-enabled yes`. */
export interface TestRedisCluster {
  /** Every node as `host:port,…`: the value of REDIS_CLUSTER_NODES. */
  nodes: string;
  servers: PrivateRedis[];
  /** The slot of a key or hash tag (`CLUSTER KEYSLOT`). */
  slotOf(key: string): Promise<number>;
  /** Port of the master serving `key`'s slot now, as the live nodes see it. */
  masterOf(key: string): Promise<number>;
  /** Ports of the masters that serve slots now. */
  masters(): Promise<number[]>;
  /** Ports of the replicas of the master on `port`, as it sees them (connected). */
  replicasOf(port: number): Promise<number[]>;
  /**
   * `count` names `<base>-<n>` whose hash tags land on `count` different masters (the first
   * one on the master of `sameAs` when given).
   */
  namesOnDistinctMasters(base: string, count: number, sameAs?: string): Promise<string[]>;
  /**
   * Kills (SIGKILL) the master serving `key` and resolves once its replica serves the slots and
   * every live node says `cluster_state:ok`. Resolves with the killed and the promoted port.
   */
  failover(key: string, options?: FailoverOptions): Promise<{ killed: number; promoted: number }>;
  /** Admin client on one live node. */
  admin(): Redis;
  stop(): Promise<void>;
}

export interface FailoverOptions {
  /**
   * Before the kill, cut the master's replicas off (they are disconnected and refused PSYNC) and
   * wait until the master holds writes they do not have: a write acknowledged then without
   * waiting for a replica (WAIT) is lost with the master, as asynchronous replication allows.
   * @defaultValue false
   */
  unreplicated?: boolean;
  /** Called after the replicas were cut off (with `unreplicated`), before the kill. */
  beforeKill?: () => Promise<void>;
}

/**
 * With `options.unreplicated`, cuts the replicas of the master on `port` off (`ACL SETUSER default
 * -psync -sync` keeps them from syncing again, `CLIENT KILL TYPE replica` drops their links),
 * resolves once it has taken a write since and `beforeKill` resolved; otherwise at once.
 */
async function beforeKill(port: number, clientOptions: RedisOptions, options: FailoverOptions = {}): Promise<void> {
  if (!options.unreplicated) return;
  const client = new Redis({ ...clientOptions, port, maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  const offset = async () => Number(/^master_repl_offset:(\d+)/m.exec(await client.info('replication'))?.[1]);
  try {
    await client.call('ACL', 'SETUSER', 'default', '-psync', '-sync');
    await client.call('CLIENT', 'KILL', 'TYPE', 'replica');
    await waitFor(`master ${port} to have no replica`, async () => /^connected_slaves:0\r?$/m.test(await client.info('replication')), 10_000, 5);
    const cut = await offset();
    await waitFor(`master ${port} to take a write its replicas lack`, async () => (await offset()) > cut, 10_000, 5);
    await options.beforeKill?.();
  } finally {
    client.disconnect();
  }
}

export interface RedisClusterOptions {
  /** `requirepass` and `masterauth` of every node. */
  password?: string;
  /** TLS only, for clients, the cluster bus and replication. */
  tls?: TlsFiles;
  /**
   * Replicas of each master: 2 leaves a master promoted after a failover with a replica, what
   * REDIS_WAIT_REPLICAS=1 needs to keep acknowledging. @defaultValue 1
   */
  replicas?: number;
}

/**
 * Starts 3 × (1 + replicas) cluster-enabled redis-server children on free loopback ports (each
 * with its own nodes file in a temp dir, no persistence): six by default. Joins them with
 * `redis-cli --cluster create … --cluster-replicas <replicas>`, and resolves once every node
 * says `cluster_state:ok` and knows all of them.
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<TestRedisCluster> {
  const { password, tls } = options;
  const replicas = options.replicas ?? 1;
  const size = 3 * (1 + replicas);
  const dir = mkdtempSync(join(tmpdir(), 'agentplane-cluster-'));
  const taken = new Set<number>();
  const startNode = async (): Promise<PrivateRedis> => {
    // A port (or its bus port) found free can be bound by another test file's process before
    // our node binds it, and the node exits: it is started again on another pair of ports.
    for (let attempt = 1; ; attempt += 1) {
      const port = await freeNodePort(taken);
      try {
        return await startPrivateRedis({
          port,
          ...(password ? { password } : {}),
          ...(tls ? { tls } : {}),
          args: [
            '--cluster-enabled', 'yes',
            '--cluster-config-file', join(dir, `nodes-${port}.conf`),
            '--cluster-node-timeout', String(NODE_TIMEOUT_MS),
            // A replica takes over however long its link was down (a busy machine can stall a
            // sync past the default age limit of 10 node timeouts, and then no replica would).
            '--cluster-replica-validity-factor', '0',
            // A replica writes the RDB of its full sync here.
            '--dir', dir,
            '--dbfilename', `dump-${port}.rdb`,
            ...(password ? ['--masterauth', password] : []),
            ...(tls ? ['--tls-cluster', 'yes', '--tls-replication', 'yes'] : []),
          ],
        });
      } catch (error) {
        if (!(error instanceof PortTakenError) || attempt === 5) throw error;
      }
    }
  };
  const started = await Promise.allSettled(Array.from({ length: size }, () => startNode()));
  const servers = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failed = started.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
    throw failed.reason;
  }
  const ports = servers.map((s) => s.port);
  const clientOptions: RedisOptions = { host: '127.0.0.1', ...(password ? { password } : {}), ...(tls ? { tls: { ca: tls.ca } } : {}) };
  const cliOptions = [...(password ? ['-a', password, '--no-auth-warning'] : []), ...(tls ? ['--tls', '--cacert', tls.caFile] : [])];
  const stop = async () => {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await run('redis-cli', [...cliOptions, '--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', String(replicas), '--cluster-yes']);
    await waitFor(`every node to see cluster_state:ok, ${size} nodes and every slot`, () => allSettled(ports, size, clientOptions), 30_000, 50);
  } catch (error) {
    await stop();
    throw error;
  }

  const alive = () => servers.filter((s) => s.running());
  const admin = () => {
    const node = alive()[0];
    if (!node) throw new Error('no live node in the test cluster');
    return new Redis({ ...clientOptions, port: node.port, lazyConnect: true, maxRetriesPerRequest: 1 });
  };
  const withAdmin = async <T>(use: (client: Redis) => Promise<T>): Promise<T> => {
    const client = admin();
    client.on('error', () => {});
    try {
      return await use(client);
    } finally {
      client.disconnect();
    }
  };
  const slotOf = (key: string) => withAdmin(async (c) => Number(await c.cluster('KEYSLOT', key)));
  const slotMasters = () => withAdmin(async (c) => (await c.cluster('SLOTS')) as unknown as [number, number, [string, number, string]][]);
  const masterOf = async (key: string) => {
    const slot = await slotOf(key);
    const range = (await slotMasters()).find(([from, to]) => slot >= from && slot <= to);
    if (!range) throw new Error(`no master serves slot ${slot}`);
    return range[2][1];
  };
  const masters = async () => [...new Set((await slotMasters()).map((range) => range[2][1]))];
  const replicasOf = async (port: number) => {
    const client = new Redis({ ...clientOptions, port, lazyConnect: true, maxRetriesPerRequest: 1 });
    client.on('error', () => {});
    try {
      return replicaPorts(await client.info('replication'));
    } finally {
      client.disconnect();
    }
  };
  try {
    // A replica still in its first sync is no replica yet: no failover to it, no WAIT answered by it.
    await waitFor(
      `every master to have ${replicas} replica(s) online`,
      async () => (await Promise.all((await masters()).map(replicasOf))).every((online) => online.length >= replicas),
      30_000,
      50,
    );
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    nodes: ports.map((p) => `127.0.0.1:${p}`).join(','),
    servers,
    slotOf,
    masterOf,
    masters,
    replicasOf,
    async namesOnDistinctMasters(base, count, sameAs) {
      const first = sameAs === undefined ? undefined : await masterOf(sameAs);
      const names: string[] = [];
      const used = new Set<number>();
      for (let n = 0; names.length < count && n < 1_000; n += 1) {
        const name = `${base}-${n}`;
        const master = await masterOf(name);
        if (used.has(master) || (names.length === 0 && first !== undefined && master !== first)) continue;
        used.add(master);
        names.push(name);
      }
      if (names.length < count) throw new Error(`no ${count} names on distinct masters`);
      return names;
    },
    async failover(key, failoverOptions) {
      const killed = await masterOf(key);
      await beforeKill(killed, clientOptions, failoverOptions);
      await servers.find((s) => s.port === killed)!.kill();
      try {
        const promoted = await waitFor(
          `a replica to take over the slots of ${killed}`,
          async () => {
            const now = await masterOf(key);
            return now !== killed && (await allSettled(alive().map((s) => s.port), size - 1, clientOptions)) && now;
          },
          60_000,
          50,
        );
        return { killed, promoted };
      } catch (error) {
        // What the cluster looked like, for the reader of a failed run.
        const nodes = await withAdmin(async (c) => String(await c.cluster('NODES'))).catch((e: unknown) => String(e));
        throw new Error(`${(error as Error).message}\nCLUSTER NODES:\n${nodes}`, { cause: error });
      }
    },
    admin,
    stop,
  };
}

/** `host:port,…` as ioredis Cluster startup nodes. */
export function seedNodes(nodes: string): { host: string; port: number }[] {
  return nodes.split(',').map((node) => {
    const [host = '', port = ''] = node.split(':');
    return { host, port: Number(port) };
  });
}

/** True when every node in `ports` says cluster_state:ok, knows `known` connected nodes, and all 16384 slots are served. */
async function allSettled(ports: number[], known: number, options: RedisOptions): Promise<boolean> {
  const states = await Promise.all(
    ports.map(async (port) => {
      const client = new Redis({ ...options, port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      client.on('error', () => {});
      try {
        await client.connect();
        const info = String(await client.cluster('INFO'));
        const nodes = String(await client.cluster('NODES'))
          .split('\n')
          .filter((line) => line.trim() !== '' && !/\bfail\b|\bfail\?|\bnoaddr\b/.test(line) && / connected/.test(line));
        return /cluster_state:ok/.test(info) && /cluster_slots_ok:16384/.test(info) && nodes.length >= known;
      } catch {
        return false;
      } finally {
        client.disconnect();
      }
    }),
  );
  return states.every(Boolean);
}

/**
 * A free loopback port whose cluster bus port (port + 10000, below 65536) is free too, neither of
 * them in `taken` nor 10000 apart from one there; both are added to `taken`.
 */
async function freeNodePort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = await freePort();
    const bus = port + 10_000;
    if (bus >= 65_536 || taken.has(port) || taken.has(bus) || taken.has(port - 10_000)) continue;
    if (!(await portIsFree(bus))) continue;
    if (taken.has(port) || taken.has(bus)) continue;
    taken.add(port);
    taken.add(bus);
    return port;
  }
}

/** Ports of the connected (`state=online`) replicas in a master's `INFO replication`. */
export function replicaPorts(info: string): number[] {
  return [...info.matchAll(/^slave\d+:.*\bport=(\d+),state=online\b/gm)].map((m) => Number(m[1]));
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} exited ${code}:\n${output}`))));
  });
}

/** A Sentinel set on loopback: one master, one (or more) replicas, three sentinels. */
export interface TestRedisSentinel {
  /** The sentinels as `host:port,…`: the value of REDIS_SENTINELS. */
  sentinels: string;
  /** The monitored master's name: REDIS_SENTINEL_NAME. */
  name: string;
  /** Password of master and replica (REDIS_PASSWORD) and of the sentinels (REDIS_SENTINEL_PASSWORD). */
  password: string;
  sentinelPassword: string;
  /** Port of the master the sentinels name now. */
  masterPort(): Promise<number>;
  /** Kills the master (SIGKILL) and resolves once the sentinels name a replica, promoted. */
  failover(options?: FailoverOptions): Promise<{ killed: number; promoted: number }>;
  stop(): Promise<void>;
}

export interface RedisSentinelOptions {
  /**
   * Replicas of the master: 2 leaves the master promoted after a failover with a replica, what
   * REDIS_WAIT_REPLICAS=1 needs to keep acknowledging. @defaultValue 1
   */
  replicas?: number;
}

/**
 * Starts a master and its replicas (`--replicaof`), all with `requirepass`, and three sentinels
 * (`redis-server <file> --sentinel`, each with its own rewritable file and a password) that
 * monitor the master with quorum 2; resolves once every sentinel knows the replicas and the
 * two other sentinels, so a failover can be elected.
 */
export async function startRedisSentinel(options: RedisSentinelOptions = {}): Promise<TestRedisSentinel> {
  const replicaCount = options.replicas ?? 1;
  const dir = mkdtempSync(join(tmpdir(), 'agentplane-sentinel-'));
  const name = 'agentplane-test';
  const password = 'data-secret';
  const sentinelPassword = 'sentinel-secret';
  // Each data node in the temp dir: a replica writes the RDB of its full sync there.
  const auth = ['--masterauth', password, '--dir', dir];
  const master = await startPrivateRedis({ password, args: auth });
  const replicas = await Promise.all(
    Array.from({ length: replicaCount }, () => startPrivateRedis({ password, args: [...auth, '--replicaof', '127.0.0.1', String(master.port)] })),
  );
  const data = [master, ...replicas];
  const sentinelPorts = await Promise.all([freePort(), freePort(), freePort()]);
  const sentinels = await Promise.all(
    sentinelPorts.map((port) => {
      const file = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        file,
        [
          `sentinel monitor ${name} 127.0.0.1 ${master.port} 2`,
          `sentinel auth-pass ${name} ${password}`,
          `sentinel down-after-milliseconds ${name} ${SENTINEL_DOWN_AFTER_MS}`,
          `sentinel failover-timeout ${name} 10000`,
          `sentinel sentinel-pass ${sentinelPassword}`,
          '',
        ].join('\n'),
      );
      return startPrivateRedis({ port, configFile: file, password: sentinelPassword, args: ['--dir', dir, '--sentinel'] });
    }),
  );
  const stop = async () => {
    await Promise.all([...sentinels, ...data].map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  const ask = async <T>(port: number, ...args: string[]): Promise<T> => {
    const client = new Redis({ port, host: '127.0.0.1', password: sentinelPassword, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => {});
    try {
      await client.connect();
      return (await client.call('SENTINEL', ...args)) as T;
    } finally {
      client.disconnect();
    }
  };
  const masterPort = async () => {
    for (const port of sentinels.filter((s) => s.running()).map((s) => s.port)) {
      try {
        return Number((await ask<string[]>(port, 'get-master-addr-by-name', name))[1]);
      } catch {
        // Ask the next one.
      }
    }
    throw new Error('no sentinel answered');
  };
  try {
    await waitFor(
      'every sentinel to know the replicas and the two other sentinels, and the replicas to be in sync',
      async () => {
        const views = await Promise.all(
          sentinelPorts.map(async (port) => [(await ask<unknown[]>(port, 'replicas', name)).length, (await ask<unknown[]>(port, 'sentinels', name)).length]),
        );
        if (!views.every(([known, others]) => known === replicaCount && others === 2)) return false;
        // And the replicas are through their first sync (a replica still syncing cannot take over).
        const client = new Redis({ port: master.port, host: '127.0.0.1', password, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        client.on('error', () => {});
        try {
          await client.connect();
          return replicaPorts(await client.info('replication')).length === replicaCount;
        } finally {
          client.disconnect();
        }
      },
      30_000,
      100,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    sentinels: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','),
    name,
    password,
    sentinelPassword,
    masterPort,
    async failover(failoverOptions) {
      const killed = await masterPort();
      await beforeKill(killed, { host: '127.0.0.1', password }, failoverOptions);
      await data.find((s) => s.port === killed)!.kill();
      const promoted = await waitFor(
        'the sentinels to promote the replica',
        async () => {
          const now = await masterPort();
          if (now === killed) return false;
          const client = new Redis({ port: now, host: '127.0.0.1', password, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
          client.on('error', () => {});
          try {
            await client.connect();
            return /role:master/.test(await client.info('replication')) && now;
          } finally {
            client.disconnect();
          }
        },
        30_000,
        100,
      );
      return { killed, promoted };
    },
    stop,
  };
}
