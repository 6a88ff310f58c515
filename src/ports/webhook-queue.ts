import type { JsonObject, TraceCarrier } from '../domain/types.js';

/** One run webhook to deliver: where, and the body it carries (fixed when the run ended). */
export interface WebhookJob {
  tenant: string;
  run_id: string;
  /** The URL the run was started with (LangGraph's `webhook`). */
  url: string;
  /** The run as the webhook shows it; the sender adds `webhook_sent_at` to each attempt. */
  payload: JsonObject;
  /** The run's W3C trace context (tracing on): the delivery's client span continues it. */
  trace?: TraceCarrier;
}

/**
 * Makes one attempt at a delivery (`attempt` counts from 1). Resolves when the delivery is done
 * for good (delivered, or refused in a way another attempt would not change); throws to be
 * tried again after the queue's backoff.
 */
export type WebhookHandler = (job: WebhookJob, attempt: number) => Promise<void>;

/**
 * The queue of run webhooks, beside the runs queue: the process that ends a run enqueues its
 * delivery; workers make the attempts. A run has one delivery: enqueueing it twice is harmless.
 */
export interface WebhookQueue {
  enqueue(job: WebhookJob): Promise<void>;
  close(): Promise<void>;
}

/** The worker side of the {@link WebhookQueue}. */
export interface WebhookConsumer {
  /**
   * Starts consuming: each delivery is attempted up to the queue's attempts, with a pause that
   * doubles between them; `onFailed` hears of a delivery whose last attempt failed.
   */
  start(handler: WebhookHandler, onFailed?: (job: WebhookJob, error: Error) => void): void;
  /** Stops taking deliveries and waits for running attempts (bounded by `timeoutMs`). Safe to call twice. */
  close(timeoutMs?: number): Promise<void>;
}

/** How a webhook queue retries (both adapters). */
export interface WebhookRetryOptions {
  /** Attempts of one delivery in all (WEBHOOK_ATTEMPTS). */
  attempts: number;
  /** Pause before the second attempt, doubling before each next one (SERVICE_WEBHOOK_BACKOFF_MS). */
  backoffMs: number;
}

/**
 * Delivery slots of one consumer (a worker, or the embedded process), shared fairly between
 * tenants: a receiver that hangs holds a slot for a whole attempt, so one tenant's deliveries
 * hold at most `perTenant` of them at once and the rest wait, without spending an attempt,
 * until one of the tenant's slots frees; another tenant's delivery takes a free slot meanwhile.
 */
export interface WebhookSlots {
  /** Deliveries attempted at once (WORKER_WEBHOOK_CONCURRENCY). */
  concurrency: number;
  /** Of those, the most one tenant's deliveries hold (WORKER_WEBHOOK_PER_TENANT; at most `concurrency`). */
  perTenant: number;
}
