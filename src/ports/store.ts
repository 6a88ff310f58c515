import type { AppError } from '../domain/errors.js';
import type { IdempotentStart } from '../domain/idempotency.js';
import type {
  Approval,
  Checkpoint,
  JsonObject,
  Run,
  RunStatus,
  Schedule,
  ScheduleFireStatus,
  ScheduleHistoryRecord,
  Session,
  Span,
} from '../domain/types.js';

/** Paging of list reads. */
export interface Page {
  limit: number;
  offset: number;
}

export interface SessionListOptions extends Page {
  agent_id?: string;
}

/** A page of a list read that is also bounded in bytes (history, whose items can be large). */
export interface BytePage extends Page {
  /** Stop adding items once their JSON passes this many bytes (the first item is always included). */
  maxBytes: number;
}

/** A page of checkpoints; `more` when the session holds older ones past it. */
export interface CheckpointPage {
  checkpoints: Checkpoint[];
  more: boolean;
}

/** A checkpoint without its state: what a write answers (reading the state is O(state)). */
export type CheckpointMeta = Omit<Checkpoint, 'state'>;

/**
 * The bounds of session storage: a state no larger than `maxStateBytes` of JSON and
 * `maxStateKeys` keys; per session, the newest `checkpointsRetain` checkpoints, `runsRetain`
 * runs and `spansRetain` spans.
 */
export interface StorageLimits {
  maxStateBytes: number;
  maxStateKeys: number;
  checkpointsRetain: number;
  /** Runs kept per session (the current one always); older ones go with their approvals. */
  runsRetain: number;
  /** Trace spans kept per session, newest. */
  spansRetain: number;
}

/** One checkpoint write: the state patch and the conditions under which it applies. */
export interface CheckpointWrite {
  /** Shallow-merged into the latest state: keys present overwrite, absent keys are kept. */
  patch: JsonObject;
  /** Node of the new checkpoint. @defaultValue the latest checkpoint's node_id */
  node_id?: string;
  /** Apply only when the latest checkpoint has this seq_num, else `precondition_failed`. */
  ifSeq?: number;
  /** Refuse with `conflict` while the session's current run is `running`. @defaultValue false */
  rejectWhileRunning?: boolean;
  /**
   * Apply only while this run is the session's current one and `running`, else `conflict`: a
   * run cancelled while its node worked writes no checkpoint after the cancel.
   */
  runId?: string;
  /**
   * Answer the merged state too when reading it is cheap (a small state); otherwise the answer
   * has no `state` and the caller reads it. @defaultValue false
   */
  withState?: boolean;
}

/** A session created before its first run ({@link SessionStore.createSession}). */
export interface NewSession {
  session_id: string;
  /** Its metadata, kept as JSON gives it back (null values too). @defaultValue {} */
  metadata?: JsonObject;
}

/**
 * Sessions, checkpoints and trace spans. Every method takes the tenant first; a session of
 * another tenant is indistinguishable from a missing one.
 */
export interface SessionStore {
  getSession(tenant: string, sessionId: string): Promise<Session | null>;
  /** Newest `created_at` first, ties by id. */
  listSessions(tenant: string, options: SessionListOptions): Promise<Session[]>;
  /**
   * Creates a session bound to no agent yet (`agent_id` ''), with no checkpoint and no run: a
   * LangGraph thread created before its first run. It is listed, and expires when idle as any
   * session does; its first run binds it to the run's agent ({@link RunStore.createRun}).
   * Throws `conflict` when the session exists (whatever its agent), `payload_too_large` when
   * the metadata's JSON passes MAX_SESSION_METADATA_BYTES (nothing is written then).
   */
  createSession(tenant: string, session: NewSession): Promise<Session>;
  /**
   * Shallow-merges `patch` into the session's metadata, a key set to null removed (as a
   * LangGraph thread patch merges), and answers the session. A write: `updated_at` moves and
   * expiry counts from it. Throws `not_found`, or `payload_too_large` when the merged
   * metadata's JSON would pass MAX_SESSION_METADATA_BYTES (nothing is written then).
   */
  updateSessionMetadata(tenant: string, sessionId: string, patch: JsonObject): Promise<Session>;
  /**
   * Atomically appends a checkpoint: seq_num = latest + 1, state = merge(latest, patch), in
   * time proportional to the patch. Answers the new checkpoint without its state. Throws
   * AppError `not_found` when the session does not exist or (without `node_id`) has no
   * checkpoint, `precondition_failed` on an `ifSeq` mismatch, `conflict` when
   * `rejectWhileRunning` is set and a run is running, `payload_too_large` / `bad_request` when
   * the merged state would pass a limit of {@link StorageLimits} (nothing is written then).
   * The oldest checkpoints past `checkpointsRetain` are dropped; the latest never is.
   */
  appendCheckpoint(tenant: string, sessionId: string, write: CheckpointWrite): Promise<CheckpointMeta & { state?: JsonObject }>;
  /** The latest checkpoint, or the one of `seq` while it is retained; null otherwise. */
  getCheckpoint(tenant: string, sessionId: string, seq?: number): Promise<Checkpoint | null>;
  /** Retained checkpoints of the session, newest first, bounded by count and bytes. */
  listCheckpoints(tenant: string, sessionId: string, page: BytePage): Promise<CheckpointPage>;
  addSpan(tenant: string, sessionId: string, span: Span): Promise<void>;
  /** Spans of the session ordered by `start`, one page. */
  listSpans(tenant: string, sessionId: string, page: Page): Promise<Span[]>;
  /**
   * Removes the session with everything of it (state, history, spans, runs, approvals, index
   * entries, schedule links). Throws `not_found` for a missing session, `conflict` while a run
   * is queued, running or interrupted.
   */
  deleteSession(tenant: string, sessionId: string): Promise<void>;
  /**
   * Expiry: removes, as {@link deleteSession} does, up to `limit` sessions of every tenant
   * whose last write is at or before `cutoffMs`, whose run is not queued or running and that
   * has no run queued behind its current one. Sessions that cannot go never hold back idle
   * ones behind them. Resolves with how many were removed.
   */
  expireSessions(cutoffMs: number, limit: number): Promise<number>;
}

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

/** An updated run; `queued_behind` when it ended with runs waiting behind it ({@link RunStore.promoteNext}). */
export type UpdatedRun = Run & { queued_behind?: true };

/**
 * A decided approval. `unconfirmed`: the decision is written but the store could not confirm
 * it durable (REDIS_WAIT_REPLICAS): the caller still does what follows a decision (the resume)
 * and then fails with it, so a decision is never left without its resume.
 */
export type DecidedApproval = Approval & { unconfirmed?: AppError };

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

/**
 * A new request; with `expires_at`, a timer decides it then ({@link TimerStore}). `payload`: any
 * JSON of at most MAX_APPROVAL_JSON_BYTES, stored as JSON (what JSON drops, e.g. an undefined
 * key, is not kept).
 */
export type NewApproval = Omit<Approval, 'status' | 'comment' | 'decided_by' | 'decided_at' | 'resume'>;

export interface ApprovalDecision {
  approved: boolean;
  comment?: string;
  /** The JSON answer (any JSON of at most MAX_APPROVAL_JSON_BYTES), recorded as the approval's `resume`. */
  resume?: unknown;
  decided_by: string;
  /**
   * The decider waits for the resumed run's next stop (`wait_ms` on POST /api/approval/respond):
   * the run counts as waited from now on ({@link NewRun.waited}).
   */
  waited?: boolean;
}

/** Human approval requests. Deciding is atomic: exactly one of concurrent answers wins. */
export interface ApprovalStore {
  /**
   * Stores a pending request (idempotent by id) and marks its run `interrupted` atomically.
   * Throws `conflict` for a new request whose run has ended (a run cancelled while its node asked),
   * `payload_too_large` for a `payload` past MAX_APPROVAL_JSON_BYTES (nothing written).
   */
  createApproval(tenant: string, approval: NewApproval): Promise<Approval>;
  getApproval(tenant: string, id: string): Promise<Approval | null>;
  /** Pending requests, oldest first, one page. */
  listPendingApprovals(tenant: string, page: Page): Promise<Approval[]>;
  /**
   * Decided requests (approved, rejected, or cancelled with their run), newest `decided_at`
   * first (ties by id), one page. They go with their run or session.
   */
  listDecidedApprovals(tenant: string, page: Page): Promise<Approval[]>;
  /** Throws `not_found` for an unknown id, `conflict` when already decided, `payload_too_large`
   * for a `resume` past MAX_APPROVAL_JSON_BYTES (nothing written). In the same atomic step an
   * `interrupted` run of the approval becomes `queued` again. */
  decideApproval(tenant: string, id: string, decision: ApprovalDecision): Promise<DecidedApproval>;
  /** Pending approvals across all tenants (for the gauge). */
  countPendingApprovals(): Promise<number>;
}

/** The start of a fire: its record begins as `running` and the schedule's next_run moves on. */
export interface NewScheduleFire {
  /** Unique per schedule and tick (the due time in ms). */
  fire_id: string;
  session_id: string;
  fired_at: string;
  due_at: string;
  next_run: string;
}

export interface ScheduleFireUpdate {
  status?: ScheduleFireStatus;
  /** Links the run to the record, so its end settles the record ({@link ScheduleStore.settleScheduleRun}). */
  run_id?: string;
  error?: string;
}

/**
 * A change of a schedule: each field given replaces the stored one; `end_time: null` removes
 * it. Its id, agent, sessions and `created_at` never change.
 */
export type SchedulePatch = Partial<
  Pick<Schedule, 'cron_expr' | 'timezone' | 'next_run' | 'input' | 'enabled' | 'graph' | 'multitask' | 'metadata' | 'webhook' | 'updated_at' | 'on_run_completed'>
> & { end_time?: string | null };

/** A stored schedule with its tenant (reconciliation reads them across tenants). */
export interface TenantSchedule {
  tenant: string;
  schedule: Schedule;
}

/**
 * Schedules and their fire history. A record's `completed` or `failed` is final; history is
 * newest first and capped at SCHEDULE_HISTORY_LIMIT (domain/types.ts) per schedule.
 */
export interface ScheduleStore {
  /**
   * Stores a new schedule. With `limit`, a tenant that already holds that many schedules is
   * refused with `conflict` (domain/schedule-cap.ts), atomically: nothing is stored then.
   */
  createSchedule(tenant: string, schedule: Schedule, limit?: number): Promise<void>;
  getSchedule(tenant: string, id: string): Promise<Schedule | null>;
  /** Newest `created_at` first, ties by id. */
  listSchedules(tenant: string, page: Page): Promise<Schedule[]>;
  /** Applies the patch atomically and answers the schedule as it is then; null when it does not exist in the tenant. */
  updateSchedule(tenant: string, id: string, patch: SchedulePatch): Promise<Schedule | null>;
  /** Removes the schedule with its history; false when it does not exist in the tenant. */
  deleteSchedule(tenant: string, id: string): Promise<boolean>;
  /** Every schedule of every tenant. */
  listAllSchedules(): Promise<TenantSchedule[]>;
  /**
   * Atomically records a fire as `running` (dropping the oldest record past the cap) and sets
   * the schedule's `next_run`. `gone` when the schedule no longer exists, `duplicate` when
   * this fire_id was already recorded (a re-delivered tick): nothing changes then.
   */
  beginScheduleFire(tenant: string, scheduleId: string, fire: NewScheduleFire): Promise<'begun' | 'duplicate' | 'gone'>;
  /** Updates a record; a missing record, or one already final, is left alone. */
  updateScheduleFire(tenant: string, scheduleId: string, fireId: string, update: ScheduleFireUpdate): Promise<void>;
  /**
   * Settles the record a run was linked to with the run's status (when it is one of
   * SETTLING_RUN_STATUSES) and answers the record's schedule id; null when no record is linked
   * or the status settles nothing.
   */
  settleScheduleRun(tenant: string, run: Pick<Run, 'id' | 'status' | 'error'>): Promise<string | null>;
  /** Newest first; throws nothing for a missing schedule (empty list). */
  listScheduleHistory(tenant: string, scheduleId: string): Promise<ScheduleHistoryRecord[]>;
}

/**
 * All storage, composed of its parts; a consumer takes the parts it uses
 * (`Pick<Store, 'runs' | 'sessions'>`). The parts of one Store share one backend, so a write
 * of one part that must see another (a run and its session's checkpoints) stays atomic.
 */
/** What the storage holds, for the metrics an operator watches before it fills up. */
export interface StorageUsage {
  /** Bytes the backend uses (Redis `used_memory`); undefined in memory. */
  memoryBytes?: number;
  /** Sessions stored, all tenants. */
  sessions: number;
  /** Schedules stored, all tenants. */
  schedules: number;
  /** Keys in the backend (Redis `DBSIZE`: every tenant, queues included); undefined in memory. */
  keys?: number;
}

/** A timer the store keeps: a run's deadline or an approval's expiry. */
export interface DueTimer {
  kind: 'run' | 'approval';
  tenant: string;
  /** The run or approval id. */
  id: string;
  dueMs: number;
}

/**
 * Deadlines of runs (`deadline_ms`) and expiries of approvals (`expires_at`), set by
 * createRun and createApproval and kept across restarts. A timer is a hint: whoever handles
 * it re-checks the run or approval with an atomic, conditional change, so several sweepers
 * (one per worker) decide each at most once.
 */
export interface TimerStore {
  /** Timers due at or before `nowMs`, earliest first, at most `limit`. */
  due(nowMs: number, limit: number): Promise<DueTimer[]>;
  /** Forgets a handled timer. */
  clear(timer: DueTimer): Promise<void>;
}

/** Exclusive, expiring leases: one holder per name across every process on the backend. */
export interface LeaseStore {
  /** True when this call took the lease `name` for `ttlMs` (nobody held it). */
  acquire(name: string, ttlMs: number): Promise<boolean>;
}

export interface Store {
  readonly sessions: SessionStore;
  readonly runs: RunStore;
  readonly approvals: ApprovalStore;
  readonly schedules: ScheduleStore;
  readonly timers: TimerStore;
  readonly leases: LeaseStore;
  /** Resolves when the backend answers, rejects otherwise (readiness). */
  ping(): Promise<void>;
  /** Sampled by the metrics at scrape time. */
  usage(): Promise<StorageUsage>;
}
