import { DelayedError, Queue, Worker, type ConnectionOptions, type Job } from 'bullmq';
import { DEFAULT_WEBHOOK_SLOTS } from '../../domain/run-webhook.js';
import type { WebhookConsumer, WebhookHandler, WebhookJob, WebhookQueue, WebhookRetryOptions, WebhookSlots } from '../../ports/webhook-queue.js';
import { closeWorker } from './close-worker.js';

/** Name of the BullMQ queue of run webhooks. */
export const WEBHOOKS_QUEUE = 'webhooks';

export interface BullWebhookQueueOptions extends WebhookRetryOptions {
  /** An ioredis connection (with `maxRetriesPerRequest: null`) or its options. */
  connection: ConnectionOptions;
  /** BullMQ key prefix, as the runs queue's. */
  prefix: string;
}

/** The job id of a run's delivery: one per run, so a second enqueue collapses into the first. */
const jobIdOf = (job: WebhookJob) => `webhook.${job.run_id}`;

/** Producer side: whichever process ends a run enqueues its delivery on the `webhooks` queue. */
export class BullWebhookQueue implements WebhookQueue {
  private readonly queue: Queue;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: BullWebhookQueueOptions) {
    this.queue = new Queue(WEBHOOKS_QUEUE, { connection: options.connection, prefix: options.prefix });
    this.queue.on('error', () => {});
  }

  async enqueue(job: WebhookJob): Promise<void> {
    await this.queue.add('deliver', job, {
      jobId: jobIdOf(job),
      attempts: this.options.attempts,
      backoff: { type: 'exponential', delay: this.options.backoffMs },
      removeOnComplete: { count: 1000 },
      removeOnFail: { count: 5000 },
    });
  }

  close(): Promise<void> {
    return (this.closing ??= this.queue.close());
  }
}

export interface BullWebhookConsumerOptions {
  connection: ConnectionOptions;
  prefix: string;
  /**
   * Deliveries attempted at once by this process (each waits on a receiver, seldom on us), and
   * how many of them one tenant's may hold. @defaultValue DEFAULT_WEBHOOK_SLOTS (16, 4)
   */
  slots?: WebhookSlots;
  onError?: (error: unknown) => void;
}

/**
 * How long a delivery whose tenant holds its share of this process's slots waits before it is
 * taken again (by this worker or another). No attempt is spent on it.
 */
export const WEBHOOK_DEFER_MS = 1_000;

/**
 * Worker side: a BullMQ Worker on the `webhooks` queue. A worker killed mid-attempt leaves the
 * job stalled and another worker makes the attempt again (at least once: receivers
 * deduplicate by `webhook-id`).
 *
 * Slots are shared between tenants ({@link WebhookSlots}): a job taken while its tenant already
 * holds `perTenant` of this worker's slots is put back, delayed by {@link WEBHOOK_DEFER_MS},
 * without an attempt (BullMQ's moveToDelayed and DelayedError), so the slot goes to the next job,
 * another tenant's; a tenant whose receiver hangs holds at most its share of each worker.
 */
export class BullWebhookConsumer implements WebhookConsumer {
  private worker: Worker<WebhookJob> | undefined;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: BullWebhookConsumerOptions) {}

  start(handler: WebhookHandler, onFailed?: (job: WebhookJob, error: Error) => void): void {
    const { connection, prefix } = this.options;
    const slots = this.options.slots ?? DEFAULT_WEBHOOK_SLOTS;
    const perTenant = Math.min(slots.perTenant, slots.concurrency);
    const held = new Map<string, number>();
    const process = async (job: Job<WebhookJob>, token?: string): Promise<void> => {
      const { tenant } = job.data;
      // Checked and taken in one turn of the event loop: no other job of this worker interleaves.
      const holding = held.get(tenant) ?? 0;
      if (holding >= perTenant) {
        await job.moveToDelayed(Date.now() + WEBHOOK_DEFER_MS, token);
        throw new DelayedError();
      }
      held.set(tenant, holding + 1);
      try {
        await handler(job.data, job.attemptsMade + 1);
      } finally {
        const left = (held.get(tenant) ?? 1) - 1;
        if (left > 0) held.set(tenant, left);
        else held.delete(tenant);
      }
    };
    this.worker = new Worker<WebhookJob>(WEBHOOKS_QUEUE, process, { connection, prefix, concurrency: slots.concurrency });
    this.worker.on('error', (error) => this.options.onError?.(error));
    this.worker.on('failed', (job, error) => {
      if (job && job.attemptsMade >= (job.opts.attempts ?? 1)) onFailed?.(job.data, error);
    });
  }

  close(timeoutMs = 10_000): Promise<void> {
    const worker = this.worker;
    if (!worker) return Promise.resolve();
    // Attempts still running past the bound are handed back: their jobs stall and are tried again.
    return (this.closing ??= closeWorker(worker, timeoutMs));
  }
}
