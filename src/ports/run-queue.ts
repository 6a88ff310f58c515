/** A unit of work for a worker: execute a run from its session's latest checkpoint. */
export interface RunJob {
  /** `start` begins a new run; `resume` continues one (after an approval, or a resume request). */
  kind: 'start' | 'resume';
  tenant: string;
  run_id: string;
  session_id: string;
  agent_id: string;
  /** The decided approval whose answer the interrupted node receives on resume. */
  approval_id?: string;
}

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
  /** Jobs currently executing in this process. */
  active(): number;
  /**
   * Stops taking jobs, lets running ones finish (bounded by `timeoutMs`, after which they are
   * handed back to the queue), and closes connections. Safe to call twice.
   */
  close(timeoutMs?: number): Promise<void>;
}

/** The job id of a run job: one per run and approval, so duplicates collapse. */
export function runJobId(job: RunJob): string {
  return [job.kind, job.run_id, job.approval_id].filter(Boolean).join('.');
}
