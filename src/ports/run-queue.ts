import type { AgentQueueDepth, TenantQueueDepth } from '../domain/fair-share.js';
import type { RunJob } from '../domain/types.js';

export type { AgentQueueDepth, RunJob, TenantQueueDepth };

/** Executes one job; throws only for infrastructure failures (the queue retries those). */
export type RunHandler = (job: RunJob) => Promise<void>;

/**
 * The queue between API replicas and workers. Enqueueing the same job twice is harmless: job
 * ids derive from the run (and approval), and the executor ignores runs already finished.
 *
 * Jobs wait per tenant and are admitted to worker slots by one rule (the same on every
 * adapter): free slots go to the tenants with waiting jobs in turn, a tenant of weight w taking
 * w jobs per turn, skipping a tenant at its running cap; within a tenant, `start` jobs in
 * arrival order, `resume` jobs (a run continuing) before them. A tenant alone gets every slot.
 * A job whose agent is at its cap (FairShare `agents`) when its turn comes waits, still queued,
 * and its tenant's next job takes the turn; when a job of that agent is done (or withdrawn
 * holding the agent's next place), the agent's next waiting job, its tenants in turn, goes back
 * to the head of its tenant's jobs with that place.
 */
export interface RunQueue {
  /**
   * Queues the job; with `delayMs`, it waits for its turn only from then on (a delayed start).
   * Never refuses for a full queue: a start checks {@link checkRoom} before it stores its run.
   */
  enqueue(job: RunJob, options?: { delayMs?: number }): Promise<void>;
  /**
   * Rejects with `rate_limited` (Retry-After) when the tenant has as many jobs waiting as its
   * queued cap allows. A probe, not a reservation: starts racing past it may each be queued.
   */
  checkRoom(tenant: string): Promise<void>;
  /** Takes the run's waiting jobs out of the queue (the run ended before its turn): their turn and count go back. */
  withdraw(run: { tenant: string; id: string; approval_id?: string }): Promise<void>;
  /** Where the tenant's queue stands. */
  depth(tenant: string): Promise<TenantQueueDepth>;
  /** The tenants with jobs waiting or admitted, most waiting first, at most `limit` of them. */
  depths(limit: number): Promise<TenantQueueDepth[]>;
  /**
   * Where each capped agent's runs stand (FairShare `agents`), by agent id: admitted now, and
   * waiting because the agent was at its cap when their turn came. Empty, without a read, when
   * no agent is capped.
   */
  agentDepths(): Promise<AgentQueueDepth[]>;
  /**
   * True when a job of the run (its start, a resume, or the resume after `approval_id`) is
   * waiting, delayed or active: a run with none and not interrupted is stuck.
   */
  hasLiveJob(run: { id: string; approval_id?: string }): Promise<boolean>;
  /**
   * How many workers take this queue's jobs now: on Redis, those whose heartbeat has not lapsed
   * (of any process); in one process, 1 once its consumer started, until it closes.
   */
  liveWorkers(): Promise<number>;
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
