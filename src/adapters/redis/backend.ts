import { withTimeout } from '../../domain/timeout.js';
import { DEFAULT_WEBHOOK_RETRY } from '../../domain/run-webhook.js';
import type { Backend } from '../../ports/backend.js';
import type { StorageLimits } from '../../ports/store.js';
import type { WebhookRetryOptions, WebhookSlots } from '../../ports/webhook-queue.js';
import { describeConnection, isCluster, openRedis, pingAll, type ClientRole, type RedisClient, type RedisConnection } from './connection.js';
import { mapFailures } from './errors.js';
import { RedisDeduplicator } from './deduplicator.js';
import { durableWrites } from './durable.js';
import { RedisEventBus } from './event-bus.js';
import { redisGraphCheckpointStore } from './graph-checkpoints.js';
import { redisGraphItemStore } from './graph-items.js';
import { redisAssistantStore } from './assistant-store.js';
import type { AssistantLimits } from '../../ports/assistant-store.js';
import { redisLimiterFactory } from './limiter.js';
import { DEFAULT_EVENT_RETENTION, DEFAULT_STORAGE_LIMITS } from '../../domain/types.js';
import { redisContext } from './context.js';
import { RedisKeys } from './keys.js';
import { RedisRunJournal } from './run-journal.js';
import { BullRunConsumer, BullRunQueue } from './run-queue.js';
import type { FairShare } from '../../domain/fair-share.js';
import { BullScheduleConsumer, BullScheduler } from './scheduler.js';
import { RedisStore } from './store.js';
import { BullWebhookConsumer, BullWebhookQueue } from './webhook-queue.js';

export interface RedisBackendOptions {
  /** The server, cluster or Sentinel-named master (REDIS_URL, REDIS_CLUSTER_NODES, REDIS_SENTINELS). */
  connection: RedisConnection;
  /** Prefix of every key and of BullMQ's queues. */
  keyPrefix: string;
  /** Events retained per tenant (SERVICE_EVENTS_RETAIN). */
  eventsRetain: number;
  /** Bytes of event JSON retained per tenant (SERVICE_EVENTS_MAX_BYTES). @defaultValue DEFAULT_EVENT_RETENTION.bytes */
  eventsMaxBytes?: number;
  /** Bytes of event JSON retained per run (SERVICE_EVENTS_RUN_MAX_BYTES). @defaultValue DEFAULT_EVENT_RETENTION.runBytes */
  eventsRunMaxBytes?: number;
  /** Run jobs executed at once by this process's consumer. */
  concurrency: number;
  /** How tenants share the workers' slots. @defaultValue DEFAULT_FAIR_SHARE */
  fairShare?: FairShare;
  /** How long a run job's lock lives without renewal (a dead worker's job is taken over after it). */
  lockDurationMs: number;
  /** Tries of a run job that fails for infrastructure reasons (RUN_JOB_ATTEMPTS). */
  jobAttempts?: number;
  /** Stalls after which a run job fails (WORKER_MAX_STALLS). */
  maxStalledCount?: number;
  /** Longest wait for running jobs and fires at close. */
  shutdownTimeoutMs: number;
  limits: StorageLimits;
  /** Bytes of LangGraph memory items one tenant may hold (SERVICE_LANGGRAPH_STORE_MAX_BYTES). @defaultValue DEFAULT_GRAPH_ITEMS_MAX_BYTES */
  graphItemsMaxBytes?: number;
  /** Assistants per tenant and versions per assistant (SERVICE_ASSISTANTS_MAX, SERVICE_ASSISTANT_VERSIONS_MAX). @defaultValue DEFAULT_ASSISTANT_LIMITS */
  assistantLimits?: Partial<AssistantLimits>;
  /** Background failures that are retried (event catch-up, queue worker errors, lost connections). */
  onError?: (what: string, error: unknown) => void;
  /** The connection to Redis is back after a failure. */
  onRecovered?: (what: string) => void;
  /** A write answered 503 because the replicas did not confirm it (REDIS_WAIT_REPLICAS). */
  onUnconfirmedWrite?: () => void;
  /** Longest wait for one command on the command connection. @defaultValue 1000 */
  commandTimeoutMs?: number;
  /** How run webhooks are retried (BullMQ attempts and exponential backoff). @defaultValue WEBHOOK_ATTEMPTS, DEFAULT_WEBHOOK_BACKOFF_MS */
  webhookRetry?: WebhookRetryOptions;
  /** A worker's delivery slots and each tenant's share of them. @defaultValue DEFAULT_WEBHOOK_SLOTS */
  webhookSlots?: WebhookSlots;
}

/**
 * Every adapter on one Redis (a server, a Redis Cluster, or a master named by Sentinels): the
 * store, the event bus (one subscriber client per process), BullMQ's queue and scheduler, and
 * the limiters. Connections are opened here, all by {@link openRedis}, and quit by
 * {@link Backend.close}; the worker sides open theirs on first use.
 */
export function createRedisBackend(options: RedisBackendOptions): Backend {
  const clients: RedisClient[] = [];
  const open = (role: ClientRole) => {
    const client = openRedis(options.connection, role);
    clients.unshift(client);
    return client;
  };
  // BullMQ and the subscriber need connections that retry forever (they block and resume on them).
  const forever = (name: string): ClientRole => ({ name, maxRetriesPerRequest: null });
  // Requests wait at most this long for Redis: a stalled or unreachable server answers 503
  // within about a second instead of hanging (BullMQ's blocking connections have no timeout).
  // Not auto-pipelined: ioredis would hold each command for a turn of the event loop and one
  // pipeline at a time, which costs a light load (one command a turn) a quarter more CPU and
  // twice the latency; concurrent commands go out back to back without it all the same.
  const redis = open({ name: 'commands', commandTimeoutMs: options.commandTimeoutMs ?? 1000, maxRetriesPerRequest: 1 });
  reportConnection(redis, options);
  const bull = open(forever('queue'));
  const prefix = options.keyPrefix;
  // BullMQ's keys on a cluster: one hash tag, as its documentation requires.
  const queuePrefix = new RedisKeys(prefix).queuePrefix(isCluster(redis));
  // REDIS_WAIT_REPLICAS: each connection that performs acknowledged writes WAITs for its own.
  const durable = (client: RedisClient) =>
    durableWrites(
      client,
      options.connection.wait,
      (count, error) => options.onError?.(`${count} write(s) answered 503: the Redis replicas did not confirm them in time (REDIS_WAIT_REPLICAS)`, error),
      options.onUnconfirmedWrite,
    );
  const store = new RedisStore(redis, { keyPrefix: prefix, limits: options.limits, durable: durable(redis) });
  const eventBytes = {
    maxBytes: options.eventsMaxBytes ?? DEFAULT_EVENT_RETENTION.bytes,
    runMaxBytes: options.eventsRunMaxBytes ?? DEFAULT_EVENT_RETENTION.runBytes,
  };
  const events = mapFailures(
    new RedisEventBus({
      redis,
      subscriber: open({ ...forever('subscriber'), shardedSubscriber: true }),
      keyPrefix: prefix,
      retain: options.eventsRetain,
      ...eventBytes,
      onError: (error) => options.onError?.('event delivery catch-up failed; retrying', error),
    }),
  );
  const queue = mapFailures(
    new BullRunQueue({
      connection: bull,
      reads: redis,
      prefix: queuePrefix,
      durable: durable(bull),
      fairShare: options.fairShare,
      ...(options.jobAttempts ? { attempts: options.jobAttempts } : {}),
    }),
  );
  const scheduler = mapFailures(new BullScheduler({ connection: bull, prefix: queuePrefix }));
  const webhooks = mapFailures(new BullWebhookQueue({ connection: bull, prefix: queuePrefix, ...(options.webhookRetry ?? DEFAULT_WEBHOOK_RETRY) }));
  let consumer: BullRunConsumer | undefined;
  let scheduleConsumer: BullScheduleConsumer | undefined;
  let webhookConsumer: BullWebhookConsumer | undefined;
  let closing: Promise<void> | undefined;
  return {
    mode: 'redis',
    store,
    events,
    journal: mapFailures(
      new RedisRunJournal(redisContext(redis, prefix), {
        limits: { ...DEFAULT_STORAGE_LIMITS, ...options.limits },
        eventsRetain: options.eventsRetain,
        eventsMaxBytes: eventBytes.maxBytes,
        eventsRunMaxBytes: eventBytes.runMaxBytes,
      }),
    ),
    queue,
    webhooks,
    scheduler,
    limiters: redisLimiterFactory({ client: redis, prefix }),
    deduplicator: mapFailures(new RedisDeduplicator(redis, prefix)),
    // On the store's connection and prefix: deleting a session (one script) removes its thread.
    graphCheckpoints: redisGraphCheckpointStore(redis, prefix),
    graphItems: redisGraphItemStore(redis, { keyPrefix: prefix, maxTenantBytes: options.graphItemsMaxBytes }),
    assistants: redisAssistantStore(redis, { keyPrefix: prefix, ...(options.assistantLimits ? { limits: options.assistantLimits } : {}) }),
    readiness: { redis: () => store.ping() },
    consumer: () =>
      (consumer ??= new BullRunConsumer({
        connection: open(forever('worker')),
        prefix: queuePrefix,
        concurrency: options.concurrency,
        fairShare: options.fairShare,
        lockDurationMs: options.lockDurationMs,
        ...(options.maxStalledCount === undefined ? {} : { maxStalledCount: options.maxStalledCount }),
        onError: (error) => options.onError?.('run queue worker error', error),
      })),
    scheduleConsumer: () =>
      (scheduleConsumer ??= new BullScheduleConsumer({ connection: open(forever('schedule-worker')), prefix: queuePrefix })),
    webhookConsumer: () =>
      (webhookConsumer ??= new BullWebhookConsumer({
        connection: open(forever('webhook-worker')),
        prefix: queuePrefix,
        ...(options.webhookSlots ? { slots: options.webhookSlots } : {}),
        onError: (error) => options.onError?.('webhook queue worker error', error),
      })),
    close: () =>
      (closing ??= (async () => {
        // Together: each has SERVICE_SHUTDOWN_TIMEOUT_MS for its jobs, not a turn after the others'.
        await Promise.all([
          scheduleConsumer?.close(options.shutdownTimeoutMs),
          consumer?.close(options.shutdownTimeoutMs),
          webhookConsumer?.close(options.shutdownTimeoutMs),
        ]);
        // With Redis down, BullMQ's close and QUIT would wait for it on connections that retry
        // forever: each step gets a bound, then the sockets are simply dropped.
        const bounded = (step: Promise<unknown>) => withTimeout(step, CLOSE_STEP_MS).catch(() => undefined);
        await Promise.all([queue.close(), scheduler.close(), webhooks.close(), events.close()].map(bounded));
        await Promise.all(clients.map((client) => bounded(client.quit()).finally(() => client.disconnect())));
      })()),
  };
}

/**
 * The error of a refused AUTH or HELLO names its command with the password among the
 * arguments: they are blanked before the error is logged.
 */
function withoutSecrets(error: unknown): unknown {
  const command = (error as { command?: { name?: unknown; args?: unknown[] } } | null)?.command;
  if (command && /^(auth|hello)$/i.test(String(command.name))) command.args = ['***'];
  return error;
}

/** Longest wait for one step of closing (a queue, a QUIT) before moving on. */
const CLOSE_STEP_MS = 2_000;

/** Smallest and largest pause between two "unreachable" log lines while Redis stays down. */
const REPORT_MIN_MS = 1_000;
const REPORT_MAX_MS = 60_000;

/**
 * Says, from the first failed connect on, that Redis is unreachable, again with a doubling
 * pause (1 s … 60 s) while it stays so, and once when it is back. On a cluster a node that
 * fails counts (its slots answer 503 until a replica takes over); it is back once every
 * master answers after the client refreshed its slot map.
 */
function reportConnection(client: RedisClient, options: RedisBackendOptions): void {
  const where = describeConnection(options.connection);
  let down = false;
  let nextAt = 0;
  let pause = REPORT_MIN_MS;
  const failed = (error: unknown, node?: string) => {
    const now = Date.now();
    if (down && now < nextAt) return;
    const which = node ? ` (node ${node})` : '';
    options.onError?.(`Redis at ${where} is unreachable${which}; requests answer 503 until it is back`, withoutSecrets(error));
    nextAt = now + pause;
    pause = down ? Math.min(pause * 2, REPORT_MAX_MS) : REPORT_MIN_MS * 2;
    down = true;
  };
  const back = () => {
    if (!down) return;
    down = false;
    pause = REPORT_MIN_MS;
    options.onRecovered?.(`Redis at ${where} is reachable again`);
  };
  client.on('error', (error: unknown) => failed(error));
  client.on('ready', back);
  if (isCluster(client)) {
    client.on('node error', (error: unknown, node: string) => failed(error, node));
    client.on('refresh', () => {
      if (down) pingAll(client).then(back, () => {});
    });
  }
}
