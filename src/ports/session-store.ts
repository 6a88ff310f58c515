import type { Checkpoint, JsonObject, Session, Span } from '../domain/types.js';
import type { Page, SessionListOptions, BytePage } from './paging.js';

/* Sessions, their checkpoints and spans: the storage port of a session's state and history. */

/** A page of checkpoints; `more` when the session holds older ones past it. */
export interface CheckpointPage {
  checkpoints: Checkpoint[];
  more: boolean;
}

/** A checkpoint without its state: what a write answers (reading the state is O(state)). */
export type CheckpointMeta = Omit<Checkpoint, 'state'>;

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
