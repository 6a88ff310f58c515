import type { RunJob } from '../domain/types.js';

export type { RunJob };

/** Executes one job; throws only for infrastructure failures (the queue retries those). */
export type RunHandler = (job: RunJob) => Promise<void>;

/**
 * The queue between API replicas and workers. Enqueueing the same job twice is harmless: job
 * ids derive from the run (and approval), and the executor ignores runs already finished.
 */
export interface RunQueue {
  /** Queues the job; with `delayMs`, a worker takes it no sooner than that (a delayed start). */
  enqueue(job: RunJob, options?: { delayMs?: number }): Promise<void>;
  /**
   * True when a job of the run (its start, a resume, or the resume after `approval_id`) is
   * waiting, delayed or active: a run with none and not interrupted is stuck.
   */
  hasLiveJob(run: { id: string; approval_id?: string }): Promise<boolean>;
  close(): Promise<void>;
}

/** The worker side of the RunQueue. */
export interface RunConsumer {
  /**
   * Starts consuming with the handler; at most `concurrency` jobs at once. `onFailed` hears of
   * each job the queue gives up on (retries exhausted, stalled too often, a handler that threw
   * where nothing retries), so its run can be ended.
   */
  start(handler: RunHandler, onFailed?: (job: RunJob, error: Error) => void): void;
  /**
   * Stops taking jobs, lets running ones finish (bounded by `timeoutMs`, after which they are
   * handed back to the queue), and closes connections. Safe to call twice.
   */
  close(timeoutMs?: number): Promise<void>;
}
