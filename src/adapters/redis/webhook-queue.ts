import { Queue, Worker, type ConnectionOptions } from 'bullmq';
import { withTimeout } from '../../domain/timeout.js';
import type { WebhookConsumer, WebhookHandler, WebhookJob, WebhookQueue, WebhookRetryOptions } from '../../ports/webhook-queue.js';

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
   * Deliveries attempted at once by this process: each waits on a receiver, seldom on us.
   * @defaultValue 16
   */
  concurrency?: number;
  onError?: (error: unknown) => void;
}

/**
 * Worker side: a BullMQ Worker on the `webhooks` queue. A worker killed mid-attempt leaves the
 * job stalled and another worker makes the attempt again (at least once: receivers
 * deduplicate by `webhook-id`).
 */
export class BullWebhookConsumer implements WebhookConsumer {
  private worker: Worker<WebhookJob> | undefined;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: BullWebhookConsumerOptions) {}

  start(handler: WebhookHandler, onFailed?: (job: WebhookJob, error: Error) => void): void {
    const { connection, prefix } = this.options;
    this.worker = new Worker<WebhookJob>(WEBHOOKS_QUEUE, async (job) => handler(job.data, job.attemptsMade + 1), {
      connection,
      prefix,
      concurrency: this.options.concurrency ?? 16,
    });
    this.worker.on('error', (error) => this.options.onError?.(error));
    this.worker.on('failed', (job, error) => {
      if (job && job.attemptsMade >= (job.opts.attempts ?? 1)) onFailed?.(job.data, error);
    });
  }

  close(timeoutMs = 10_000): Promise<void> {
    const worker = this.worker;
    if (!worker) return Promise.resolve();
    // Attempts still running past the bound are handed back: their jobs stall and are tried again.
    return (this.closing ??= withTimeout(worker.close(), timeoutMs).catch(() => worker.close(true)));
  }
}
