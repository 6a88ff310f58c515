import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import type { AgentQueueDepth, RunConsumer, RunHandler, RunJob, RunQueue, TenantQueueDepth } from '../../ports/run-queue.js';
import { DEFAULT_FAIR_SHARE, type FairShare } from '../../domain/fair-share.js';
import { liveJobIds } from '../../domain/run-jobs.js';
import type { RedisClient } from './connection.js';
import type { DurableWrites } from './durable.js';
import { AppError } from '../../domain/errors.js';
import { RunAdmission, type RunJobOptions } from './run-admission.js';
import { closeWorker } from './close-worker.js';

/** Name of the BullMQ queue of runs. */
export const RUNS_QUEUE = 'runs';

export interface BullRunQueueOptions {
  /** An ioredis connection (with `maxRetriesPerRequest: null`). */
  connection: RedisClient;
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
  /** How tenants share the worker slots. @defaultValue DEFAULT_FAIR_SHARE */
  fairShare?: FairShare | undefined;
  /**
   * The connection of a request's reads of the queue (its tenant's room, depths, live workers):
   * the backend's commands connection, whose command timeout answers a stalled Redis in time
   * (BullMQ's connection waits for Redis as long as it takes). @defaultValue connection
   */
  reads?: RedisClient | undefined;
}

function runJobOptions(options: BullRunQueueOptions): RunJobOptions {
  return {
    attempts: options.attempts ?? 10,
    backoff: { type: 'exponential', delay: 500 },
    removeOnComplete: { count: 1000 },
    removeOnFail: { count: 5000 },
  };
}

/** States of a job that will still execute. */
const LIVE_STATES = new Set(['waiting', 'delayed', 'active', 'prioritized', 'waiting-children']);

/**
 * Producer side: API replicas queue `start` and `resume` jobs for their turn ({@link RunAdmission});
 * admitted, they are added to the BullMQ `runs` queue.
 */
export class BullRunQueue implements RunQueue {
  private readonly queue: Queue;
  private readonly admission: RunAdmission;
  private closing: Promise<void> | undefined;
  private readonly durable: DurableWrites | undefined;
  /** A key in the slot of every key of the queue (the prefix is their hash tag on a cluster). */
  private readonly slotKey: string;

  constructor(options: BullRunQueueOptions) {
    this.queue = new Queue(RUNS_QUEUE, { connection: options.connection, prefix: options.prefix });
    this.admission = new RunAdmission(options.connection, options.prefix, this.queue, runJobOptions(options), options.fairShare ?? DEFAULT_FAIR_SHARE, options.reads);
    this.durable = options.durable;
    this.slotKey = `${options.prefix}:${RUNS_QUEUE}`;
    this.queue.on('error', () => {});
  }

  async enqueue(job: RunJob, options: { delayMs?: number } = {}): Promise<void> {
    const replicated = this.durable?.track();
    await this.admission.enqueue(job, options.delayMs);
    await replicated?.([this.slotKey]);
  }

  async checkRoom(tenant: string): Promise<void> {
    try {
      await this.admission.checkRoom(tenant);
    } catch (error) {
      if (error instanceof AppError) throw error;
      // The look did not come back (a stalled or lost Redis): the cap protects the queue, it is
      // no gate of its own. The start goes on to store its run, whose write answers for Redis
      // (503, or the write lands and a keyed retry finds it), as every start did before the cap.
    }
  }

  withdraw(run: { tenant: string; id: string; approval_id?: string }): Promise<void> {
    return this.admission.withdraw(run);
  }

  depth(tenant: string): Promise<TenantQueueDepth> {
    return this.admission.depth(tenant);
  }

  depths(limit: number): Promise<TenantQueueDepth[]> {
    return this.admission.depths(limit);
  }

  agentDepths(): Promise<AgentQueueDepth[]> {
    return this.admission.agentDepths();
  }

  async hasLiveJob(run: { id: string; approval_id?: string }): Promise<boolean> {
    const ids = liveJobIds(run);
    if (await this.admission.holds(ids)) return true;
    const states = await Promise.all(ids.map((id) => this.queue.getJobState(id)));
    return states.some((state) => LIVE_STATES.has(state));
  }

  liveWorkers(): Promise<number> {
    return this.admission.liveWorkers();
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

/** How often a worker renews its slots and runs the admission step (delayed jobs come due then). */
const HEARTBEAT_MS = 1_000;
/** How long a worker's slots count without a heartbeat: a killed worker's capacity goes after this. */
const HEARTBEAT_LASTS_MS = 5_000;
/** How often a worker tries the reconcile pass (one worker at a time does it). */
const RECONCILE_MS = 5_000;

/**
 * Worker side: a BullMQ Worker on the `runs` queue. It registers its slots for the admission
 * step (a heartbeat that lapses when the worker dies), gives a job's slot back when the job is
 * done for good, and takes its turn at the reconcile pass.
 */
export class BullRunConsumer implements RunConsumer {
  private worker: Worker | undefined;
  private closing: Promise<void> | undefined;
  private readonly queue: Queue;
  private readonly admission: RunAdmission;
  private readonly id = randomUUID();
  private timers: NodeJS.Timeout[] = [];

  constructor(private readonly options: BullRunConsumerOptions) {
    this.queue = new Queue(RUNS_QUEUE, { connection: options.connection, prefix: options.prefix });
    this.queue.on('error', () => {});
    this.admission = new RunAdmission(options.connection, options.prefix, this.queue, runJobOptions(options), options.fairShare ?? DEFAULT_FAIR_SHARE);
  }

  start(handler: RunHandler, onFailed?: (job: RunJob, error: Error) => void): void {
    const { connection, prefix, concurrency, lockDurationMs } = this.options;
    this.worker = new Worker(
      RUNS_QUEUE,
      async (job) => {
        await handler(job.data as RunJob);
        // Not awaited: sent in this turn of the event loop, the release leaves in one write with
        // BullMQ's completion of the job that follows it on this connection, in that order.
        void this.release(job.id!, job.data as RunJob);
      },
      {
        connection,
        prefix,
        concurrency,
        lockDuration: lockDurationMs,
        stalledInterval: lockDurationMs,
        // A run killed with its worker is resumed from its latest checkpoint; allow that a few times.
        maxStalledCount: this.options.maxStalledCount ?? 5,
      },
    );
    this.worker.on('error', (error) => this.options.onError?.(error));
    // Only a job that will not be tried again: retries exhausted, or stalled too often.
    // (A job stalled too often fails, UnrecoverableError, when a worker next takes it.)
    this.worker.on('failed', (job, error) => {
      if (!job) return;
      if (error.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1)) {
        onFailed?.(job.data as RunJob, error);
        void this.release(job.id!, job.data as RunJob);
      }
    });
    const heartbeat = () => this.admission.admit({ id: this.id, slots: concurrency, lastsMs: HEARTBEAT_LASTS_MS }).catch((error: unknown) => this.options.onError?.(error));
    void heartbeat();
    this.timers = [
      setInterval(heartbeat, HEARTBEAT_MS),
      setInterval(() => void this.admission.reconcile(RECONCILE_MS).catch((error: unknown) => this.options.onError?.(error)), RECONCILE_MS),
    ];
    for (const timer of this.timers) timer.unref();
  }

  /** A job done for good gives its slot back; a lost release (Redis down) is the reconcile pass's to redo. */
  private async release(jobId: string, job: RunJob): Promise<void> {
    await this.admission.release(jobId, job).catch((error: unknown) => this.options.onError?.(error));
  }

  close(timeoutMs = 10_000): Promise<void> {
    const worker = this.worker;
    for (const timer of this.timers) clearInterval(timer);
    if (!worker) return (this.closing ??= this.queue.close());
    return (this.closing ??= (async () => {
      // Jobs still running past the bound are handed back: their locks lapse and another worker takes them.
      await closeWorker(worker, timeoutMs);
      // Its slots leave the capacity now rather than when its heartbeat lapses.
      await this.admission.admit({ id: this.id, slots: this.options.concurrency, lastsMs: 0 }).catch((error: unknown) => this.options.onError?.(error));
      await this.queue.close();
    })());
  }
}
