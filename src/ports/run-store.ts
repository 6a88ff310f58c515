import type { AppError } from '../domain/errors.js';
import type { IdempotentStart } from '../domain/idempotency.js';
import type { JsonObject, Run, RunStatus } from '../domain/types.js';
import type { Page } from './paging.js';

/* Runs: creation (one active run per session, the queue behind it, retention), status changes, reads. */

export interface NewRun {
  run_id: string;
  session_id: string;
  agent_id: string;
  /**
   * The run's first checkpoint, appended in the same atomic step: positioned at `node_id`,
   * with `input` shallow-merged into the session's latest state. Omitted for a resume, which
   * continues from the latest checkpoint.
   */
  start?: { node_id: string; input: JsonObject };
  /** When the run is cancelled with `error: "timeout"` if still active (ms since the epoch). */
  deadline_ms?: number;
  /**
   * When the session has an active run: queue this one behind it (its first checkpoint is
   * written when it becomes current) instead of refusing. At most MAX_QUEUED_BEHIND wait.
   */
  behind?: boolean;
  /**
   * A request waits for this run to stop (POST /api/runs/wait): an adapter may announce its
   * end with the run and its state ({@link StoredEvent.stop}) so the waiter reads nothing back.
   */
  waited?: boolean;
  /**
   * The start's Idempotency-Key (scoped to the caller) and the digest of its run fields: when
   * the tenant has a start under `scope` within IDEMPOTENCY_TTL_MS, nothing is written and the
   * run it created is answered (`replayed`), or `idempotency_key_reused` when its fingerprint
   * differs; otherwise the key is stored with the run, in the same atomic step.
   */
  idempotency?: IdempotentStart;
  /**
   * The input of a run another engine executes (a LangGraph graph: its input or command, as
   * JSON text), kept with the run for the worker ({@link RunStore.getRunInput}); such a run's
   * `start.input` is empty, since its state is the graph's.
   */
  graph_input?: string;
  /**
   * The metadata of the session when this run creates it (as {@link NewSession.metadata});
   * ignored when the session exists. @defaultValue {}
   */
  metadata?: JsonObject;
}

/** A page of the tenant's runs matching every filter given ({@link RunStore.findRuns}). */
export interface RunListOptions extends Page {
  /** Only the runs of this session. */
  session_id?: string;
  status?: RunStatus;
  agent_id?: string;
}

/**
 * An updated run; `queued_behind` when it ended with runs waiting behind it ({@link RunStore.promoteNext});
 * `stored_input` when the write that ended it read its stored input along ({@link RunStore.getRunInput}:
 * the text, or null for none), so that its end needs no read of its own.
 */
export type UpdatedRun = Run & { queued_behind?: true; stored_input?: string | null };

/**
 * A created run; `behind` when it waits for the session's active run to end (or, replayed,
 * still waits). `replayed`: the run an earlier start with the same Idempotency-Key created,
 * as it is now. `unconfirmed`: written, but not confirmed durable (REDIS_WAIT_REPLICAS): the
 * caller enqueues its job first, then fails with it, so a run is never left without its job.
 */
export type CreatedRun = Run & { behind?: boolean; replayed?: boolean; unconfirmed?: AppError };

export interface RunUpdate {
  status: RunStatus;
  error?: string;
  /** Apply only when the run's status is one of these, else `conflict`. @defaultValue any */
  from?: readonly RunStatus[];
  /** Recorded as `decided_by` on the pending approval a terminal status closes. @defaultValue "system" */
  by?: string;
}

/** What {@link RunStore.promoteNext} did: the run made current, and waiting runs it failed. */
export interface Promotion {
  started: Run | null;
  failed: Run[];
}

/** An active run as the reaper sees it. */
export interface ActiveRun {
  tenant: string;
  run: Run;
  /** Queued behind the session's current run (no job of its own yet). */
  behind: boolean;
}

/** Runs; a session has at most one active (queued, running, interrupted) run at a time. */
export interface RunStore {
  /**
   * Atomically creates the run as `queued`, creating its session when absent (binding it to
   * the run's agent when it has none yet), with its first checkpoint when `start` is given.
   * Throws `conflict` when the session belongs to another agent, or has an active run and
   * `behind` is not set (or MAX_QUEUED_BEHIND runs wait); `idempotency_key_reused`, or
   * `conflict` when the run a replayed key created is gone; `payload_too_large` for a new
   * session's `metadata` past its bound.
   */
  createRun(tenant: string, run: NewRun): Promise<CreatedRun>;
  /**
   * Whether the tenant has a start under the key's scope within IDEMPOTENCY_TTL_MS (whatever its
   * fingerprint): {@link createRun} with it then writes nothing, so checks meant for new runs
   * (the queued cap) let it through to answer as the first start did.
   */
  hasIdempotencyKey(tenant: string, key: IdempotentStart): Promise<boolean>;
  /** The `graph_input` the run was created with; null when it had none or is gone. */
  getRunInput(tenant: string, runId: string): Promise<string | null>;
  getRun(tenant: string, runId: string): Promise<Run | null>;
  /** Runs of a session, newest first, one page. */
  listRuns(tenant: string, sessionId: string, page: Page): Promise<Run[]>;
  /**
   * The tenant's runs matching every filter given, newest `created_at` first (ties by id), one
   * page. Bounded: a page of one index kept per status, per agent and per both (without
   * `session_id`), or the session's retained runs. Runs go from the indexes with their session.
   */
  findRuns(tenant: string, options: RunListOptions): Promise<Run[]>;
  /** The latest run of a session, if any. */
  latestRun(tenant: string, sessionId: string): Promise<Run | null>;
  /**
   * Sets the run's status. A terminal status (completed, failed, cancelled) also closes the
   * run's pending approval (status `cancelled`, no longer listed) and takes a run queued behind
   * out of its session's queue, in the same atomic step. Throws `not_found`, or `conflict` when
   * `from` is given and the run's status is not in it.
   */
  updateRun(tenant: string, runId: string, update: RunUpdate): Promise<UpdatedRun>;
  /**
   * When the session has no active run and runs wait behind (`behind`), makes the oldest the
   * current one and writes its first checkpoint; a waiting run whose input no longer fits the
   * state limits fails and the next is tried. Resolves with the run to enqueue (or null) and
   * the runs that failed so.
   */
  promoteNext(tenant: string, sessionId: string): Promise<Promotion>;
  /**
   * Removes an ended run with its approvals, indexes and schedule link, as retention drops
   * old runs; when it was its session's latest run, the session has none (its latestRun is
   * null) until the next. Throws `not_found`, or `conflict` for an active run.
   */
  deleteRun(tenant: string, runId: string): Promise<void>;
  /** Active runs of every tenant last updated at or before `updatedBeforeMs`, at most `limit`. */
  listActiveRuns(updatedBeforeMs: number, limit: number): Promise<ActiveRun[]>;
}
