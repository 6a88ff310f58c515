import type { Backend } from '../../ports/backend.js';
import { DEFAULT_WEBHOOK_RETRY } from '../../domain/run-webhook.js';
import type { StorageLimits } from '../../ports/store.js';
import type { WebhookRetryOptions, WebhookSlots } from '../../ports/webhook-queue.js';
import { MemoryDeduplicator } from './deduplicator.js';
import { MemoryEventBus } from './event-bus.js';
import { MemoryGraphCheckpointStore } from './graph-checkpoints.js';
import { MemoryGraphItemStore } from './graph-items.js';
import { MemoryAssistantStore } from './assistant-store.js';
import type { AssistantLimits } from '../../ports/assistant-store.js';
import { memoryLimiterFactory } from './limiter.js';
import { MemoryRunJournal } from './run-journal.js';
import { MemoryRunQueue } from './run-queue.js';
import type { FairShare } from '../../domain/fair-share.js';
import { MemoryScheduler } from './scheduler.js';
import { MemoryStore } from './store.js';
import { MemoryWebhookQueue } from './webhook-queue.js';

export interface MemoryBackendOptions {
  /** Events retained per tenant for replay (SERVICE_EVENTS_RETAIN). */
  eventsRetain: number;
  /** Bytes of event JSON retained per tenant (SERVICE_EVENTS_MAX_BYTES). @defaultValue DEFAULT_EVENT_RETENTION.bytes */
  eventsMaxBytes?: number;
  /** Bytes of event JSON retained per run (SERVICE_EVENTS_RUN_MAX_BYTES). @defaultValue DEFAULT_EVENT_RETENTION.runBytes */
  eventsRunMaxBytes?: number;
  /** Run jobs executed at once. */
  concurrency: number;
  /** How tenants share those slots. @defaultValue DEFAULT_FAIR_SHARE */
  fairShare?: FairShare;
  /** Longest wait for running jobs and fires at close. */
  shutdownTimeoutMs: number;
  limits: StorageLimits;
  /** Bytes of LangGraph memory items one tenant may hold (SERVICE_LANGGRAPH_STORE_MAX_BYTES). @defaultValue DEFAULT_GRAPH_ITEMS_MAX_BYTES */
  graphItemsMaxBytes?: number;
  /** Assistants per tenant and versions per assistant (SERVICE_ASSISTANTS_MAX, SERVICE_ASSISTANT_VERSIONS_MAX). @defaultValue DEFAULT_ASSISTANT_LIMITS */
  assistantLimits?: Partial<AssistantLimits>;
  /** How run webhooks are retried (on in-process timers). @defaultValue WEBHOOK_ATTEMPTS, DEFAULT_WEBHOOK_BACKOFF_MS */
  webhookRetry?: WebhookRetryOptions;
  /** Delivery slots and each tenant's share of them. @defaultValue DEFAULT_WEBHOOK_SLOTS */
  webhookSlots?: WebhookSlots;
}

/**
 * Every adapter in process memory: the embedded mode. The queue and the scheduler are their
 * own consumers, so runs execute and schedules fire in this process.
 */
export function createMemoryBackend(options: MemoryBackendOptions): Backend {
  // Refuses LangGraph writes for a thread whose session is gone (the store is built next).
  const graphCheckpoints: MemoryGraphCheckpointStore = new MemoryGraphCheckpointStore({
    sessionExists: (tenant: string, threadId: string): boolean => store.hasSession(tenant, threadId),
  });
  const store: MemoryStore = new MemoryStore({ limits: options.limits, graphCheckpoints });
  const events = new MemoryEventBus(options.eventsRetain, {
    ...(options.eventsMaxBytes ? { maxBytes: options.eventsMaxBytes } : {}),
    ...(options.eventsRunMaxBytes ? { runMaxBytes: options.eventsRunMaxBytes } : {}),
  });
  const queue = new MemoryRunQueue({ concurrency: options.concurrency, ...(options.fairShare ? { fairShare: options.fairShare } : {}) });
  const scheduler = new MemoryScheduler();
  const webhooks = new MemoryWebhookQueue(options.webhookRetry ?? DEFAULT_WEBHOOK_RETRY, options.webhookSlots);
  let closing: Promise<void> | undefined;
  return {
    mode: 'memory',
    store,
    events,
    journal: new MemoryRunJournal(store, events),
    queue,
    webhooks,
    scheduler,
    limiters: memoryLimiterFactory,
    deduplicator: new MemoryDeduplicator(),
    graphCheckpoints,
    graphItems: new MemoryGraphItemStore({ maxTenantBytes: options.graphItemsMaxBytes }),
    assistants: new MemoryAssistantStore(options.assistantLimits),
    readiness: { memory: () => store.ping() },
    consumer: () => queue,
    scheduleConsumer: () => scheduler,
    webhookConsumer: () => webhooks,
    close: () =>
      (closing ??= (async () => {
        await scheduler.close(options.shutdownTimeoutMs);
        await queue.close(options.shutdownTimeoutMs);
        await webhooks.close(options.shutdownTimeoutMs);
        await events.close();
      })()),
  };
}
