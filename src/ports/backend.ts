import type { AssistantStore } from './assistant-store.js';
import type { Deduplicator, Notes } from './deduplicator.js';
import type { EventBus } from './event-bus.js';
import type { GraphCheckpointStore, GraphItemStore } from './graph-storage.js';
import type { LimiterFactory } from './limiter.js';
import type { RunJournal } from './run-journal.js';
import type { RunConsumer, RunQueue } from './run-queue.js';
import type { ScheduleConsumer, Scheduler } from './scheduler.js';
import type { Store } from './store.js';
import type { WebhookConsumer, WebhookQueue } from './webhook-queue.js';

/** A named dependency check for /health/ready; rejects when the dependency is down. */
export type ReadinessCheck = () => Promise<void>;

/**
 * The adapters of one process, built together on one backend (Redis, or memory for the
 * embedded mode) by the composition root. The worker sides are created on first call, so an
 * API replica opens no worker connections.
 */
export interface Backend {
  readonly mode: 'redis' | 'memory';
  readonly store: Store;
  readonly events: EventBus;
  /** The worker's run path: taking a run, recording each node (one round trip each on Redis). */
  readonly journal: RunJournal;
  readonly queue: RunQueue;
  /** Run webhooks to deliver (whichever process ends a run enqueues; workers deliver). */
  readonly webhooks: WebhookQueue;
  /** Schedule triggers (the API upserts and removes them; workers fire them). */
  readonly scheduler: Scheduler;
  /** Rate limiters on this backend: shared by every replica on Redis, per process in memory. */
  readonly limiters: LimiterFactory;
  /** Delivery ids of inbound webhooks and chat platforms, to handle a replayed delivery once; and the chat gateway's notes. */
  readonly deduplicator: Deduplicator & Notes;
  /**
   * LangGraph checkpoints, on the store's storage: a thread is a session (thread id = session
   * id), and deleting or expiring the session removes the thread.
   */
  readonly graphCheckpoints: GraphCheckpointStore;
  /** LangGraph cross-thread memory items, per tenant (not per session: they outlive sessions). */
  readonly graphItems: GraphItemStore;
  /** LangGraph assistants stored per tenant (POST /assistants), with their versions. */
  readonly assistants: AssistantStore;
  /** Checks run by /health/ready, by name (`redis`, `memory`). */
  readonly readiness: Readonly<Record<string, ReadinessCheck>>;
  /** The worker side of the queue. */
  consumer(): RunConsumer;
  /** The worker side of the scheduler (fires). */
  scheduleConsumer(): ScheduleConsumer;
  /** The worker side of the webhook queue (deliveries). */
  webhookConsumer(): WebhookConsumer;
  /** Stops consumers (bounded by the shutdown timeout), then closes every connection. Safe to call twice. */
  close(): Promise<void>;
}
