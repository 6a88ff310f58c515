import type { TenantQueueDepth } from '../domain/fair-share.js';
import type { IdempotentStart } from '../domain/idempotency.js';
import type { Approval, JsonObject, Multitask, Run, RunStatus } from '../domain/types.js';
import type { ApprovalDecision } from './store.js';

/** A tenant's queue depth with the workers alive (0 on Redis when none is: its runs wait until one starts). */
export interface RunQueueStanding extends TenantQueueDepth {
  workers: number;
}

export interface StartRunRequest {
  agent_id: string;
  input?: JsonObject;
  /** Run on this session (created when absent); a new session id is minted when omitted. */
  session_id?: string;
  /** When the session has an active run. @defaultValue reject (409) */
  multitask?: Multitask;
  /** Cancel the run with `error: "timeout"` if still active this long after it starts. @defaultValue RUN_TIMEOUT_MS */
  timeout_ms?: number;
  /** A worker takes the run no sooner than this (it stays `queued` until then; LangGraph's `after_seconds`). */
  delay_ms?: number;
  /**
   * For a graph agent: what its engine is asked (LangGraph's input or command and run options,
   * JSON), in place of `input`. @defaultValue `{ input }`
   */
  graph?: Record<string, unknown>;
  /**
   * POST the run to this URL when it ends (LangGraph's `webhook`; a graph's may be given as
   * `graph.webhook` instead): http or https, at most MAX_WEBHOOK_URL_BYTES, else `bad_request`.
   * Kept with the run; where it points is checked at delivery.
   */
  webhook?: string;
  /**
   * The session goes with the run (a LangGraph stateless background run, `on_completion:
   * delete`): the process that ends the run deletes it once the run's webhook is queued. Kept
   * with the run (its stored input).
   */
  temporary?: boolean;
}

/** What starting or resuming a run answers: the run is queued for a worker. */
export interface RunTicket {
  run_id: string;
  session_id: string;
  status: 'queued';
  /** A start answered from its Idempotency-Key: the run an earlier start created, with its status now. */
  replayed?: RunStatus;
}

export interface StartRunOptions {
  /** The caller waits for the run to stop (see NewRun.waited). */
  waited?: boolean;
  /**
   * The start's Idempotency-Key: a start already made with it is answered (`replayed`) and its
   * job enqueued again if it is missing; a failed start leaves its run for the retry.
   */
  idempotency?: IdempotentStart;
  /**
   * The caller checked the tenant's queued cap itself, counting the places its own changes free
   * before this start (a LangGraph `multitask_strategy: rollback` removes the thread's active
   * runs first): the start does not look again, so a rollback is never followed by a refusal.
   */
  roomChecked?: boolean;
}

/**
 * The application operations that start and unblock runs. The HTTP routes, the schedule
 * fires, the webhook bridge and the chat approval bridges all go through this one interface,
 * so they share validation, atomicity and error codes (`unknown_agent`, `conflict`,
 * `not_found`).
 */
export interface RunControl {
  /**
   * Creates the run and enqueues its job. A start that fails after its run was written leaves
   * no run without a job behind: without an Idempotency-Key the run is ended `failed` (it was
   * never acknowledged); with one it stays for the retry, which enqueues its job (or, when no
   * retry comes, the reaper ends it).
   */
  startRun(tenant: string, request: StartRunRequest, options?: StartRunOptions): Promise<RunTicket>;
  /** Continue a failed, edited or decided session from its latest checkpoint. */
  resumeSession(tenant: string, sessionId: string): Promise<RunTicket>;
  /** Decide an approval atomically and enqueue the resume of its run. */
  answerApproval(tenant: string, approvalId: string, decision: ApprovalDecision): Promise<Approval>;
  /**
   * Cancel an active run: queued and interrupted ones at once (an interrupted run's approval is
   * closed), a running one too, and its worker's node sees `ctx.signal` fire. Throws
   * `not_found`, or `conflict` naming the status when the run already ended.
   */
  cancelRun(tenant: string, runId: string, by: string, error?: string): Promise<Run>;
  /** Where the tenant's runs stand in the run queue: waiting for a worker slot, admitted, and the workers alive to take them. */
  queueDepth(tenant: string): Promise<RunQueueStanding>;
}
