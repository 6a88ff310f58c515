import { Redis, type RedisOptions } from 'ioredis';
import { MemoryStore } from '../adapters/memory/store.js';
import { RedisStore } from '../adapters/redis/store.js';
import type { Config } from '../config.js';
import type { ReadinessCheck } from '../http/deps.js';
import type { Store } from '../ports/store.js';

/** The storage side of a process: Redis when REDIS_URL is set, memory otherwise. */
export interface Backend {
  mode: 'redis' | 'memory';
  store: Store;
  /** The command connection (Redis mode only); other components derive their own from it. */
  redis?: Redis;
  readiness: Record<string, ReadinessCheck>;
  /** Quits every connection this backend opened. Safe to call twice. */
  close(): Promise<void>;
}

/** Options for every ioredis connection agentplane opens for commands. */
export function redisOptions(): RedisOptions {
  return {
    // Fail a command after a few reconnect attempts instead of hanging a request forever.
    maxRetriesPerRequest: 3,
    retryStrategy: (attempt: number) => Math.min(50 * 2 ** attempt, 2000),
    connectionName: 'agentplane',
  };
}

export function createBackend(config: Config): Backend {
  if (!config.REDIS_URL) {
    const store = new MemoryStore();
    return { mode: 'memory', store, readiness: { memory: () => store.ping() }, close: () => store.close() };
  }
  const redis = new Redis(config.REDIS_URL, redisOptions());
  // Connection errors surface through failing commands and readiness; the event must not crash.
  redis.on('error', () => {});
  const store = new RedisStore(redis, { keyPrefix: config.SERVICE_KEY_PREFIX });
  let closed = false;
  return {
    mode: 'redis',
    store,
    redis,
    readiness: { redis: () => store.ping() },
    close: async () => {
      if (closed) return;
      closed = true;
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
