import { Redis, type RedisOptions } from 'ioredis';
import { withTimeout } from '../../domain/timeout.js';
import type { Backend } from '../../ports/backend.js';
import type { StorageLimits } from '../../ports/store.js';
import { mapFailures } from './errors.js';
import { RedisDeduplicator } from './deduplicator.js';
import { RedisEventBus } from './event-bus.js';
import { redisLimiterFactory } from './limiter.js';
import { DEFAULT_STORAGE_LIMITS } from '../../domain/types.js';
import { redisContext } from './context.js';
import { RedisRunJournal } from './run-journal.js';
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
  /** Tries of a run job that fails for infrastructure reasons (RUN_JOB_ATTEMPTS). */
  jobAttempts?: number;
  /** Stalls after which a run job fails (WORKER_MAX_STALLS). */
  maxStalledCount?: number;
  /** Longest wait for running jobs and fires at close. */
  shutdownTimeoutMs: number;
  limits: StorageLimits;
  /** Background failures that are retried (event catch-up, queue worker errors, lost connections). */
  onError?: (what: string, error: unknown) => void;
  /** The connection to Redis is back after a failure. */
  onRecovered?: (what: string) => void;
  /** Longest wait for one command on the command connection. @defaultValue 1000 */
  commandTimeoutMs?: number;
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
  // Requests wait at most this long for Redis: a stalled or unreachable server answers 503
  // within about a second instead of hanging (BullMQ's blocking connections have no timeout).
  const redis = open('commands', { commandTimeout: options.commandTimeoutMs ?? 1000, maxRetriesPerRequest: 1 });
  reportConnection(redis, options);
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
  const queue = mapFailures(new BullRunQueue({ connection: bull, prefix, ...(options.jobAttempts ? { attempts: options.jobAttempts } : {}) }));
  const scheduler = mapFailures(new BullScheduler({ connection: bull, prefix }));
  let consumer: BullRunConsumer | undefined;
  let scheduleConsumer: BullScheduleConsumer | undefined;
  let closing: Promise<void> | undefined;
  return {
    mode: 'redis',
    store,
    events,
    journal: mapFailures(
      new RedisRunJournal(redisContext(redis, prefix), { limits: { ...DEFAULT_STORAGE_LIMITS, ...options.limits }, eventsRetain: options.eventsRetain }),
    ),
    queue,
    scheduler,
    limiters: redisLimiterFactory({ client: redis, prefix }),
    deduplicator: mapFailures(new RedisDeduplicator(redis, prefix)),
    readiness: { redis: () => store.ping() },
    consumer: () =>
      (consumer ??= new BullRunConsumer({
        connection: open('worker', forever),
        prefix,
        concurrency: options.concurrency,
        lockDurationMs: options.lockDurationMs,
        ...(options.maxStalledCount === undefined ? {} : { maxStalledCount: options.maxStalledCount }),
        onError: (error) => options.onError?.('run queue worker error', error),
      })),
    scheduleConsumer: () => (scheduleConsumer ??= new BullScheduleConsumer({ connection: open('schedule-worker', forever), prefix })),
    close: () =>
      (closing ??= (async () => {
        await scheduleConsumer?.close(options.shutdownTimeoutMs);
        await consumer?.close(options.shutdownTimeoutMs);
        // With Redis down, BullMQ's close and QUIT would wait for it on connections that retry
        // forever: each step gets a bound, then the sockets are simply dropped.
        const bounded = (step: Promise<unknown>) => withTimeout(step, CLOSE_STEP_MS).catch(() => undefined);
        await bounded(queue.close());
        await bounded(scheduler.close());
        await bounded(events.close());
        await Promise.all(clients.map((client) => bounded(client.quit()).finally(() => client.disconnect())));
      })()),
  };
}

/** Longest wait for one step of closing (a queue, a QUIT) before moving on. */
const CLOSE_STEP_MS = 2_000;

/** Smallest and largest pause between two "unreachable" log lines while Redis stays down. */
const REPORT_MIN_MS = 1_000;
const REPORT_MAX_MS = 60_000;

/**
 * Says, from the first failed connect on, that Redis is unreachable, again with a doubling
 * pause (1 s … 60 s) while it stays so, and once when it is back.
 */
function reportConnection(client: Redis, options: RedisBackendOptions): void {
  let down = false;
  let nextAt = 0;
  let pause = REPORT_MIN_MS;
  client.on('error', (error: unknown) => {
    const now = Date.now();
    if (down && now < nextAt) return;
    options.onError?.(`Redis at ${redactedUrl(options.url)} is unreachable; requests answer 503 until it is back`, error);
    nextAt = now + pause;
    pause = down ? Math.min(pause * 2, REPORT_MAX_MS) : REPORT_MIN_MS * 2;
    down = true;
  });
  client.on('ready', () => {
    if (!down) return;
    down = false;
    pause = REPORT_MIN_MS;
    options.onRecovered?.(`Redis at ${redactedUrl(options.url)} is reachable again`);
  });
}

/** The URL without its password, for logs. */
function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'REDIS_URL';
  }
}
