import { randomUUID } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { hasRedisServer, HOW_TO_GET_ONE, killPrivateServers, startPrivateRedis, type PrivateRedis, type PrivateRedisOptions } from '../../scripts/dev/redis-server.js';

export { freePort, killPrivateServers, makeCertificates, startPrivateRedis, tlsArgs } from '../../scripts/dev/redis-server.js';
export type { PrivateRedis, PrivateRedisOptions, TlsFiles } from '../../scripts/dev/redis-server.js';

// A test file's leftover redis-server children (a hook that failed or timed out) die with it.
if (process.env.VITEST) afterAll(killPrivateServers);

/** A Redis for a test file: its URL and how to let it go. */
export interface TestRedis {
  url: string;
  stop(): Promise<void>;
}

export function uniquePrefix(name = 'test'): string {
  return `${name}-${randomUUID().slice(0, 8)}`;
}

/**
 * Finds a Redis in the order of ARCHITECTURE.md: `REDIS_URL`; a `redis-server` binary started
 * on a free port for this test file; Docker through testcontainers. Throws with a message
 * saying how to get one when there is none, so a test never skips silently.
 */
export async function startRedis(): Promise<TestRedis> {
  if (process.env.REDIS_URL) {
    return { url: process.env.REDIS_URL, stop: async () => {} };
  }
  if (hasRedisServer()) return startPrivateRedis();
  try {
    const { GenericContainer } = await import('testcontainers');
    const container = await new GenericContainer('redis:7-alpine').withExposedPorts(6379).start();
    return {
      url: `redis://${container.getHost()}:${container.getMappedPort(6379)}`,
      stop: async () => {
        await container.stop();
      },
    };
  } catch (error) {
    throw new Error(`${HOW_TO_GET_ONE} (testcontainers: ${(error as Error).message})`, { cause: error });
  }
}

/**
 * A Redis for the whole test file (started in beforeAll, stopped in afterAll): its URL, and a
 * way to open clients on it that are all disconnected at the end. Call at the top level of a
 * test file (or of a describe block, for its tests alone).
 */
export function useRedis(): { readonly url: string; connect(options?: RedisOptions): Redis } {
  let redis: TestRedis | undefined;
  const clients: Redis[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await redis?.stop();
  });
  return {
    get url() {
      if (!redis) throw new Error('useRedis(): the url is only available inside tests and hooks.');
      return redis.url;
    },
    connect(options: RedisOptions = {}) {
      if (!redis) throw new Error('useRedis(): connect() is only available inside tests and hooks.');
      const client = new Redis(redis.url, options);
      clients.push(client);
      return client;
    },
  };
}

/**
 * A private redis-server (see startPrivateRedis) for the enclosing describe block or test file:
 * started in beforeAll, stopped in afterAll. Its url, port and controls are available inside
 * tests and hooks.
 */
export function usePrivateRedis(options: PrivateRedisOptions = {}): PrivateRedis {
  let redis: PrivateRedis | undefined;
  beforeAll(async () => {
    redis = await startPrivateRedis(options);
  });
  afterAll(async () => {
    await redis?.stop();
  });
  const started = (): PrivateRedis => {
    if (!redis) throw new Error('usePrivateRedis(): the server is only available inside tests and hooks.');
    return redis;
  };
  return {
    get url() {
      return started().url;
    },
    get port() {
      return started().port;
    },
    stop: () => started().stop(),
    kill: () => started().kill(),
    restart: () => started().restart(),
    pause: () => started().pause(),
    resume: () => started().resume(),
    running: () => started().running(),
    pid: () => started().pid(),
  };
}
