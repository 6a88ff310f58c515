import { Queue, Worker, type ConnectionOptions } from 'bullmq';
import type { RunConsumer, RunHandler, RunJob, RunQueue } from '../../ports/run-queue.js';
import { runJobId } from '../../domain/run-jobs.js';

/** Name of the BullMQ queue of runs. */
export const RUNS_QUEUE = 'runs';

export interface BullRunQueueOptions {
  /** An ioredis connection (with `maxRetriesPerRequest: null`) or its options. */
  connection: ConnectionOptions;
  /** BullMQ key prefix: SERVICE_KEY_PREFIX. */
  prefix: string;
}

const JOB_OPTIONS = {
  // Infrastructure failures (a Redis outage) are retried for minutes (0.5 s doubling, ten
  // times); node errors never reach BullMQ, the executor records them on the run.
  attempts: 10,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: { count: 1000 },
  removeOnFail: { count: 5000 },
} as const;

/** Producer side: API replicas enqueue `start` and `resume` jobs on the `runs` queue. */
export class BullRunQueue implements RunQueue {
  private readonly queue: Queue;
  private closing: Promise<void> | undefined;

  constructor(options: BullRunQueueOptions) {
    this.queue = new Queue(RUNS_QUEUE, { connection: options.connection, prefix: options.prefix });
    this.queue.on('error', () => {});
  }

  async enqueue(job: RunJob): Promise<void> {
    await this.queue.add(job.kind, job, { ...JOB_OPTIONS, jobId: runJobId(job) });
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
  onError?: (error: unknown) => void;
}

/** Worker side: a BullMQ Worker on the `runs` queue. */
export class BullRunConsumer implements RunConsumer {
  private worker: Worker | undefined;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: BullRunConsumerOptions) {}

  start(handler: RunHandler): void {
    const { connection, prefix, concurrency, lockDurationMs } = this.options;
    this.worker = new Worker(RUNS_QUEUE, async (job) => handler(job.data as RunJob), {
      connection,
      prefix,
      concurrency,
      lockDuration: lockDurationMs,
      stalledInterval: lockDurationMs,
      // A run killed with its worker is resumed from its latest checkpoint; allow that a few times.
      maxStalledCount: 5,
    });
    this.worker.on('error', (error) => this.options.onError?.(error));
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
