import { Redis, type RedisOptions } from 'ioredis';
import type { Backend } from '../../ports/backend.js';
import type { StorageLimits } from '../../ports/store.js';
import { mapFailures } from './errors.js';
import { RedisEventBus } from './event-bus.js';
import { redisLimiterFactory } from './limiter.js';
import { BullRunConsumer, BullRunQueue } from './run-queue.js';
import { BullScheduleConsumer, BullScheduler } from './scheduler.js';
import { RedisStore } from './store.js';

export interface RedisBackendOptions {
  /** `redis://` URL of the server. */
  url: string;
  /** Prefix of every key and of BullMQ's queues. */
  keyPrefix: string;
  /** Events retained per tenant (XADD MAXLEN ~). */
  eventsRetain: number;
  /** Run jobs executed at once by this process's consumer. */
  concurrency: number;
  /** How long a run job's lock lives without renewal (a dead worker's job is taken over after it). */
  lockDurationMs: number;
  /** Longest wait for running jobs and fires at close. */
  shutdownTimeoutMs: number;
  limits: StorageLimits;
  /** Background failures that are retried (event catch-up, queue worker errors). */
  onError?: (what: string, error: unknown) => void;
}

/** Options of every connection: a command fails after a few reconnect attempts instead of hanging a request. */
const CONNECTION_OPTIONS: RedisOptions = {
  maxRetriesPerRequest: 3,
  retryStrategy: (attempt: number) => Math.min(50 * 2 ** attempt, 2000),
};

/**
 * Every adapter on one Redis: the store, the event bus (one subscriber connection per
 * process), BullMQ's queue and scheduler, and the limiters. Connections are opened here and
 * quit by {@link Backend.close}; the worker sides open theirs on first use.
 */
export function createRedisBackend(options: RedisBackendOptions): Backend {
  const clients: Redis[] = [];
  const open = (name: string, extra: RedisOptions = {}) => {
    const client = new Redis(options.url, { ...CONNECTION_OPTIONS, connectionName: `agentplane:${name}`, ...extra });
    // Connection errors surface through failing commands and readiness; the event must not crash.
    client.on('error', () => {});
    clients.unshift(client);
    return client;
  };
  // BullMQ and the subscriber need connections that retry forever (they block and resume on them).
  const forever = { maxRetriesPerRequest: null };
  const redis = open('commands');
  const bull = open('queue', forever);
  const prefix = options.keyPrefix;
  const store = new RedisStore(redis, { keyPrefix: prefix, limits: options.limits });
  const events = mapFailures(
    new RedisEventBus({
      redis,
      subscriber: open('subscriber', forever),
      keyPrefix: prefix,
      retain: options.eventsRetain,
      onError: (error) => options.onError?.('event delivery catch-up failed; retrying', error),
    }),
  );
  const queue = mapFailures(new BullRunQueue({ connection: bull, prefix }));
  const scheduler = mapFailures(new BullScheduler({ connection: bull, prefix }));
  let consumer: BullRunConsumer | undefined;
  let scheduleConsumer: BullScheduleConsumer | undefined;
  let closing: Promise<void> | undefined;
  return {
    mode: 'redis',
    store,
    events,
    queue,
    scheduler,
    limiters: redisLimiterFactory({ client: redis, prefix }),
    readiness: { redis: () => store.ping() },
    consumer: () =>
      (consumer ??= new BullRunConsumer({
        connection: open('worker', forever),
        prefix,
        concurrency: options.concurrency,
        lockDurationMs: options.lockDurationMs,
        onError: (error) => options.onError?.('run queue worker error', error),
      })),
    scheduleConsumer: () => (scheduleConsumer ??= new BullScheduleConsumer({ connection: open('schedule-worker', forever), prefix })),
    close: () =>
      (closing ??= (async () => {
        await scheduleConsumer?.close(options.shutdownTimeoutMs);
        await consumer?.close(options.shutdownTimeoutMs);
        await queue.close();
        await scheduler.close();
        await events.close();
        for (const client of clients) await client.quit().catch(() => client.disconnect());
      })()),
  };
}
