import { Queue, Worker, type ConnectionOptions } from 'bullmq';
import type { RunConsumer, RunHandler, RunJob, RunQueue } from '../../ports/run-queue.js';
import { liveJobIds, runJobId } from '../../domain/run-jobs.js';
import type { DurableWrites } from './durable.js';

/** Name of the BullMQ queue of runs. */
export const RUNS_QUEUE = 'runs';

export interface BullRunQueueOptions {
  /** An ioredis connection (with `maxRetriesPerRequest: null`) or its options. */
  connection: ConnectionOptions;
  /** BullMQ key prefix: SERVICE_KEY_PREFIX. */
  prefix: string;
  /**
   * Tries of a job that fails for infrastructure reasons (a Redis outage), 0.5 s doubling
   * between them (RUN_JOB_ATTEMPTS); node errors never reach BullMQ, the executor records them.
   * @defaultValue 10
   */
  attempts?: number;
  /** WAIT for replicas after each enqueue, on the connection that added the job (REDIS_WAIT_REPLICAS). */
  durable?: DurableWrites | undefined;
}

/** States of a job that will still execute. */
const LIVE_STATES = new Set(['waiting', 'delayed', 'active', 'prioritized', 'waiting-children']);

/** Producer side: API replicas enqueue `start` and `resume` jobs on the `runs` queue. */
export class BullRunQueue implements RunQueue {
  private readonly queue: Queue;
  private closing: Promise<void> | undefined;
  private readonly jobOptions;
  private readonly durable: DurableWrites | undefined;
  /** A key in the slot of every key of the queue (the prefix is their hash tag on a cluster). */
  private readonly slotKey: string;

  constructor(options: BullRunQueueOptions) {
    this.queue = new Queue(RUNS_QUEUE, { connection: options.connection, prefix: options.prefix });
    this.durable = options.durable;
    this.slotKey = `${options.prefix}:${RUNS_QUEUE}`;
    this.queue.on('error', () => {});
    this.jobOptions = {
      attempts: options.attempts ?? 10,
      backoff: { type: 'exponential', delay: 500 },
      removeOnComplete: { count: 1000 },
      removeOnFail: { count: 5000 },
    } as const;
  }

  async enqueue(job: RunJob, options: { delayMs?: number } = {}): Promise<void> {
    const replicated = this.durable?.track();
    const delay = options.delayMs && options.delayMs > 0 ? { delay: options.delayMs } : {};
    await this.queue.add(job.kind, job, { ...this.jobOptions, ...delay, jobId: runJobId(job) });
    await replicated?.([this.slotKey]);
  }

  async hasLiveJob(run: { id: string; approval_id?: string }): Promise<boolean> {
    const states = await Promise.all(liveJobIds(run).map((id) => this.queue.getJobState(id)));
    return states.some((state) => LIVE_STATES.has(state));
  }

  close(): Promise<void> {
    return (this.closing ??= this.queue.close());
  }
}

export interface BullRunConsumerOptions extends BullRunQueueOptions {
  concurrency: number;
  /**
   * How long a job's lock lives without renewal; a worker killed mid-job leaves a job that
   * another worker takes over after about this long. @defaultValue 30000
   */
  lockDurationMs: number;
  /** Stalls (its worker died or hung past the lock) after which a job fails (WORKER_MAX_STALLS). @defaultValue 5 */
  maxStalledCount?: number;
  onError?: (error: unknown) => void;
}

/** Worker side: a BullMQ Worker on the `runs` queue. */
export class BullRunConsumer implements RunConsumer {
  private worker: Worker | undefined;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: BullRunConsumerOptions) {}

  start(handler: RunHandler, onFailed?: (job: RunJob, error: Error) => void): void {
    const { connection, prefix, concurrency, lockDurationMs } = this.options;
    this.worker = new Worker(RUNS_QUEUE, async (job) => handler(job.data as RunJob), {
      connection,
      prefix,
      concurrency,
      lockDuration: lockDurationMs,
      stalledInterval: lockDurationMs,
      // A run killed with its worker is resumed from its latest checkpoint; allow that a few times.
      maxStalledCount: this.options.maxStalledCount ?? 5,
    });
    this.worker.on('error', (error) => this.options.onError?.(error));
    // Only a job that will not be tried again: retries exhausted, or stalled too often.
    // (A job stalled too often fails, UnrecoverableError, when a worker next takes it.)
    this.worker.on('failed', (job, error) => {
      if (!job) return;
      if (error.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1)) onFailed?.(job.data as RunJob, error);
    });
  }


  close(timeoutMs = 10_000): Promise<void> {
    const worker = this.worker;
    if (!worker) return Promise.resolve();
    return (this.closing ??= (async () => {
      let timer: NodeJS.Timeout | undefined;
      const graceful = worker.close().then(() => 'closed' as const);
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
      });
      const outcome = await Promise.race([graceful, timeout]);
      clearTimeout(timer);
      // Jobs still running are handed back: their locks lapse and another worker takes them.
      if (outcome === 'timeout') await worker.close(true);
    })());
  }
}
