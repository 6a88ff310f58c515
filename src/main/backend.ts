import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { MemoryEventBus } from '../adapters/memory/event-bus.js';
import { MemoryRunQueue } from '../adapters/memory/run-queue.js';
import { MemoryScheduler } from '../adapters/memory/scheduler.js';
import { MemoryStore } from '../adapters/memory/store.js';
import { RedisEventBus } from '../adapters/redis/event-bus.js';
import { BullRunConsumer, BullRunQueue } from '../adapters/redis/run-queue.js';
import { BullScheduleConsumer, BullScheduler } from '../adapters/redis/scheduler.js';
import { RedisStore } from '../adapters/redis/store.js';
import type { Config } from '../config.js';
import type { ReadinessCheck } from '../http/deps.js';
import type { EventBus } from '../ports/event-bus.js';
import type { RunConsumer, RunQueue } from '../ports/run-queue.js';
import type { ScheduleConsumer, Scheduler } from '../ports/scheduler.js';
import type { Store } from '../ports/store.js';

/**
 * The adapters of a process: Redis (and BullMQ) when REDIS_URL is set, memory otherwise.
 * Only this module and the entry points create Redis clients.
 */
export interface Backend {
  mode: 'redis' | 'memory';
  store: Store;
  events: EventBus;
  queue: RunQueue;
  /** The command connection (Redis mode only). */
  redis?: Redis;
  readiness: Record<string, ReadinessCheck>;
  /** The worker side of the queue; in memory mode the queue itself. Created on first call. */
  consumer(): RunConsumer;
  /** Schedule triggers: BullMQ job schedulers, or in-process timers in memory mode. */
  scheduler: Scheduler;
  /** The worker side of the scheduler (fires); in memory mode the scheduler itself. */
  scheduleConsumer(): ScheduleConsumer;
  /** Quits every connection this backend opened, consumer first. Safe to call twice. */
  close(): Promise<void>;
}

/** Options for every ioredis connection agentplane opens for commands. */
export function redisOptions(): RedisOptions {
  return {
    // Fail a command after a few reconnect attempts instead of hanging a request forever.
    maxRetriesPerRequest: 3,
    retryStrategy: (attempt: number) => Math.min(50 * 2 ** attempt, 2000),
  };
}

function connect(url: string, name: string, options: RedisOptions = {}): Redis {
  const client = new Redis(url, { ...redisOptions(), connectionName: `agentplane:${name}`, ...options });
  // Connection errors surface through failing commands and readiness; the event must not crash.
  client.on('error', () => {});
  return client;
}

export function createBackend(config: Config, logger?: Logger): Backend {
  return config.REDIS_URL ? redisBackend(config, config.REDIS_URL, logger) : memoryBackend(config);
}

function memoryBackend(config: Config): Backend {
  const store = new MemoryStore();
  const events = new MemoryEventBus(config.SERVICE_EVENTS_RETAIN);
  const queue = new MemoryRunQueue({ concurrency: config.WORKER_CONCURRENCY });
  const scheduler = new MemoryScheduler();
  return {
    mode: 'memory',
    store,
    events,
    queue,
    readiness: { memory: () => store.ping() },
    consumer: () => queue,
    scheduler,
    scheduleConsumer: () => scheduler,
    close: async () => {
      await scheduler.close(config.SERVICE_SHUTDOWN_TIMEOUT_MS);
      await queue.close(config.SERVICE_SHUTDOWN_TIMEOUT_MS);
      await events.close();
      await store.close();
    },
  };
}

function redisBackend(config: Config, url: string, logger?: Logger): Backend {
  const clients: Redis[] = [];
  const open = (name: string, options?: RedisOptions) => {
    const client = connect(url, name, options);
    clients.unshift(client);
    return client;
  };
  const redis = open('commands');
  const subscriber = open('subscriber', { maxRetriesPerRequest: null });
  // BullMQ needs connections that retry forever (it blocks and resumes on them).
  const bull = open('queue', { maxRetriesPerRequest: null });
  const store = new RedisStore(redis, { keyPrefix: config.SERVICE_KEY_PREFIX });
  const events = new RedisEventBus({
    redis,
    subscriber,
    keyPrefix: config.SERVICE_KEY_PREFIX,
    retain: config.SERVICE_EVENTS_RETAIN,
    onError: (error) => logger?.warn({ err: error }, 'event delivery catch-up failed; retrying'),
  });
  const queue = new BullRunQueue({ connection: bull, prefix: config.SERVICE_KEY_PREFIX });
  const scheduler = new BullScheduler({ connection: bull, prefix: config.SERVICE_KEY_PREFIX });
  let consumer: BullRunConsumer | undefined;
  let scheduleConsumer: BullScheduleConsumer | undefined;
  let closing: Promise<void> | undefined;
  return {
    mode: 'redis',
    store,
    events,
    queue,
    redis,
    readiness: { redis: () => store.ping() },
    consumer: () =>
      (consumer ??= new BullRunConsumer({
        connection: open('worker', { maxRetriesPerRequest: null }),
        prefix: config.SERVICE_KEY_PREFIX,
        concurrency: config.WORKER_CONCURRENCY,
        lockDurationMs: config.WORKER_STALLED_INTERVAL_MS,
        onError: (error) => logger?.warn({ err: error }, 'run queue worker error'),
      })),
    scheduler,
    scheduleConsumer: () =>
      (scheduleConsumer ??= new BullScheduleConsumer({
        connection: open('schedule-worker', { maxRetriesPerRequest: null }),
        prefix: config.SERVICE_KEY_PREFIX,
      })),
    close: () =>
      (closing ??= (async () => {
        await scheduleConsumer?.close(config.SERVICE_SHUTDOWN_TIMEOUT_MS);
        await consumer?.close(config.SERVICE_SHUTDOWN_TIMEOUT_MS);
        await queue.close();
        await scheduler.close();
        await events.close();
        for (const client of clients) await client.quit().catch(() => client.disconnect());
      })()),
  };
}
