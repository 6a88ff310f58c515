import { readFileSync } from 'node:fs';
import { z } from 'zod';

/** A `host:port` of a Redis node or a Sentinel. */
export interface HostPort {
  host: string;
  port: number;
}

/** TLS of the connections to one kind of server. */
export interface TlsSettings {
  /** PEM of the certificate authorities to trust instead of Node's bundle (REDIS_TLS_CA_FILE). */
  ca?: string;
}

/** Credentials of the data nodes (REDIS_USERNAME, REDIS_PASSWORD). */
export interface RedisAuth {
  username?: string;
  password?: string;
}

/**
 * Durable acknowledgements (REDIS_WAIT_REPLICAS, REDIS_WAIT_TIMEOUT_MS): before the API
 * acknowledges a run, an approval decision or a checkpoint patch, Redis `WAIT`s until this
 * many replicas have the write. Absent: off (no WAIT).
 */
export interface ReplicaWait {
  /** Replicas that must confirm the write. */
  replicas: number;
  /** Longest wait for them (ms); past it the request answers 503. */
  timeoutMs: number;
}

/**
 * How every process reaches Redis, from the settings of `src/config.ts`:
 * - `single`: one server by URL (REDIS_URL; `rediss://` for TLS).
 * - `cluster`: a Redis Cluster, found from any of its nodes (REDIS_CLUSTER_NODES).
 * - `sentinel`: the master a set of Sentinels names (REDIS_SENTINELS, REDIS_SENTINEL_NAME),
 *   followed across failovers.
 */
export type RedisConnection = (
  | { mode: 'single'; url: string; tls?: TlsSettings }
  | { mode: 'cluster'; nodes: HostPort[]; auth: RedisAuth; tls?: TlsSettings }
  | {
      mode: 'sentinel';
      sentinels: HostPort[];
      name: string;
      auth: RedisAuth;
      sentinelPassword?: string;
      tls?: TlsSettings;
      sentinelTls?: TlsSettings;
    }
) & {
  /** Durable acknowledgements, in any mode; absent when REDIS_WAIT_REPLICAS is 0. */
  wait?: ReplicaWait;
};

/** `host:port,host:port`: hostnames or IPv4 addresses (or `[IPv6]`) and ports; empty is unset. */
export const hostPortList = z
  .string()
  .optional()
  .transform((value, ctx): HostPort[] | undefined => {
    const nodes: HostPort[] = [];
    for (const entry of (value ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '')) {
      const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(entry);
      const port = Number(match?.[2]);
      if (!match || port < 1 || port > 65535) {
        ctx.addIssue({ code: 'custom', message: `expected host:port,host:port such as redis-0:6379,redis-1:6379; "${entry}" is not host:port` });
        return z.NEVER;
      }
      nodes.push({ host: match[1]!.replace(/^\[|\]$/g, ''), port });
    }
    return nodes.length > 0 ? nodes : undefined;
  });

/** The parsed settings of the connection (see README, Configuration). */
interface Settings {
  REDIS_URL?: string | undefined;
  REDIS_CLUSTER_NODES?: HostPort[] | undefined;
  REDIS_SENTINELS?: HostPort[] | undefined;
  REDIS_SENTINEL_NAME: string;
  REDIS_USERNAME?: string | undefined;
  REDIS_PASSWORD?: string | undefined;
  REDIS_SENTINEL_PASSWORD?: string | undefined;
  REDIS_TLS: boolean;
  REDIS_SENTINEL_TLS: boolean;
  REDIS_TLS_CA_FILE?: string | undefined;
  REDIS_WAIT_REPLICAS: number;
  REDIS_WAIT_TIMEOUT_MS: number;
}

/**
 * The connection the settings describe, undefined when none is set (the embedded mode).
 * REDIS_URL, REDIS_CLUSTER_NODES and REDIS_SENTINELS exclude each other; credentials and TLS
 * of a URL belong in the URL. `fail` throws the config error naming the variable. REDIS_WAIT_REPLICAS
 * above 0 adds `wait` to any mode (the embedded mode has no replicas: it is ignored there).
 */
export function redisConnectionOf(env: Settings, fail: (variable: string, detail: string) => never): RedisConnection | undefined {
  const connection = connectionOf(env, fail);
  if (!connection || env.REDIS_WAIT_REPLICAS === 0) return connection;
  return { ...connection, wait: { replicas: env.REDIS_WAIT_REPLICAS, timeoutMs: env.REDIS_WAIT_TIMEOUT_MS } };
}

function connectionOf(env: Settings, fail: (variable: string, detail: string) => never): RedisConnection | undefined {
  const given = (['REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_SENTINELS'] as const).filter((name) => env[name] !== undefined);
  if (given.length > 1) fail(given[1]!, `set only one of REDIS_URL, REDIS_CLUSTER_NODES and REDIS_SENTINELS (${given.join(' and ')} are set)`);
  const ca = env.REDIS_TLS_CA_FILE === undefined ? undefined : readCa(env.REDIS_TLS_CA_FILE, fail);
  const tls: TlsSettings = ca ? { ca } : {};
  const auth = { ...(env.REDIS_USERNAME ? { username: env.REDIS_USERNAME } : {}), ...(env.REDIS_PASSWORD ? { password: env.REDIS_PASSWORD } : {}) };
  if (env.REDIS_URL !== undefined) {
    for (const name of ['REDIS_USERNAME', 'REDIS_PASSWORD', 'REDIS_TLS'] as const) {
      if (env[name]) fail(name, 'with REDIS_URL, put credentials and TLS in the URL (rediss://user:password@host:port)');
    }
    return { mode: 'single', url: env.REDIS_URL, ...(ca ? { tls } : {}) };
  }
  if (env.REDIS_CLUSTER_NODES) return { mode: 'cluster', nodes: env.REDIS_CLUSTER_NODES, auth, ...(env.REDIS_TLS ? { tls } : {}) };
  if (env.REDIS_SENTINELS) {
    return {
      mode: 'sentinel',
      sentinels: env.REDIS_SENTINELS,
      name: env.REDIS_SENTINEL_NAME,
      auth,
      ...(env.REDIS_SENTINEL_PASSWORD ? { sentinelPassword: env.REDIS_SENTINEL_PASSWORD } : {}),
      ...(env.REDIS_TLS ? { tls } : {}),
      ...(env.REDIS_SENTINEL_TLS ? { sentinelTls: tls } : {}),
    };
  }
  return undefined;
}

function readCa(path: string, fail: (variable: string, detail: string) => never): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    return fail('REDIS_TLS_CA_FILE', `cannot read ${path}: ${(error as Error).message}`);
  }
}
