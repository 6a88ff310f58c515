import type { Checkpoint, Run, RunStatus } from '../domain/types.js';
import type { ApprovalStore } from './approval-store.js';
import type { RunStore } from './run-store.js';
import type { ScheduleStore } from './schedule-store.js';
import type { SessionStore } from './session-store.js';

export type * from './paging.js';
export type * from './session-store.js';
export type * from './run-store.js';
export type * from './approval-store.js';
export type * from './schedule-store.js';

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

/** A session's latest run and latest checkpoint ({@link Store.latestOfSessions}). */
export interface SessionLatest {
  run: Run | null;
  /** Undefined: not read (past the byte budget of the call). */
  checkpoint?: Checkpoint | null;
}

/**
 * A session as a list of LangGraph threads shows it ({@link Store.listThreadRows}): its fields,
 * its metadata and latest state as JSON text (sent on as they are, never parsed), what its
 * latest run and checkpoint say of its status.
 */
export interface ThreadRow {
  id: string;
  agent_id: string;
  created_at: string;
  updated_at: string;
  /** The session's metadata, a JSON object. */
  metadata: string;
  /** The session's latest run; null without one. */
  run: { status: RunStatus; error?: string; seq_num?: number } | null;
  /**
   * The latest checkpoint with its state (a JSON object); null without one; undefined when not
   * read (a large state, or past the call's byte budget): the caller reads it on its own.
   */
  checkpoint?: { seq_num: number; node_id: string; created_at: string; state: string } | null;
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
  /**
   * A lease a process keeps while it works (the one Telegram poller): true when `holder` holds
   * `name` for `ttlMs` from now, taken (nobody held it, or it lapsed) or extended (`holder`
   * held it); false while another holder has it.
   */
  hold(name: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Lets `name` go when `holder` holds it, so another process takes it at once; else nothing. */
  drop(name: string, holder: string): Promise<void>;
}

export interface Store {
  readonly sessions: SessionStore;
  readonly runs: RunStore;
  readonly approvals: ApprovalStore;
  readonly schedules: ScheduleStore;
  readonly timers: TimerStore;
  readonly leases: LeaseStore;
  /**
   * The latest run and the latest checkpoint of each session named, in order (nulls for what a
   * session lacks, or for a session that does not exist): what a list of threads shows of each,
   * read in one round trip where the backend can. A backend that reads states in bytes stops
   * reading them past `maxStateBytes` (the first one always read): the checkpoints past it are
   * left out (undefined), for the caller to read on its own.
   */
  latestOfSessions(tenant: string, sessionIds: readonly string[], maxStateBytes: number): Promise<SessionLatest[]>;
  /**
   * One page of the tenant's sessions, newest first (as `listSessions` without an agent), each
   * with its latest run and checkpoint as {@link ThreadRow}: a list of threads in one round
   * trip where the backend can. States are read up to `maxStateBytes` in all (the first one
   * always), as {@link latestOfSessions} reads them.
   */
  listThreadRows(tenant: string, page: { offset: number; limit: number }, maxStateBytes: number): Promise<ThreadRow[]>;
  /** Resolves when the backend answers, rejects otherwise (readiness). */
  ping(): Promise<void>;
  /** Sampled by the metrics at scrape time. */
  usage(): Promise<StorageUsage>;
}
