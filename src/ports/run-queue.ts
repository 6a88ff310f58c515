import type { RunJob } from '../domain/types.js';

export type { RunJob };

/** Executes one job; throws only for infrastructure failures (the queue retries those). */
export type RunHandler = (job: RunJob) => Promise<void>;

/**
 * The queue between API replicas and workers. Enqueueing the same job twice is harmless: job
 * ids derive from the run (and approval), and the executor ignores runs already finished.
 */
export interface RunQueue {
  enqueue(job: RunJob): Promise<void>;
  close(): Promise<void>;
}

/** The worker side of the RunQueue. */
export interface RunConsumer {
  /** Starts consuming with the handler; at most `concurrency` jobs at once. */
  start(handler: RunHandler): void;
  /**
   * Stops taking jobs, lets running ones finish (bounded by `timeoutMs`, after which they are
   * handed back to the queue), and closes connections. Safe to call twice.
   */
  close(timeoutMs?: number): Promise<void>;
}
