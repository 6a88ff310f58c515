import type { AppError } from '../domain/errors.js';
import type { Approval } from '../domain/types.js';
import type { Page } from './paging.js';

/* Approval requests: created by a pausing run, decided once. */

/**
 * A decided approval. `unconfirmed`: the decision is written but the store could not confirm
 * it durable (REDIS_WAIT_REPLICAS): the caller still does what follows a decision (the resume)
 * and then fails with it, so a decision is never left without its resume.
 */
export type DecidedApproval = Approval & { unconfirmed?: AppError };

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
