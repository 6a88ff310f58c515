import type { Approval, JsonObject, Multitask, Run } from '../domain/types.js';
import type { ApprovalDecision } from './store.js';

export interface StartRunRequest {
  agent_id: string;
  input?: JsonObject;
  /** Run on this session (created when absent); a new session id is minted when omitted. */
  session_id?: string;
  /** When the session has an active run. @defaultValue reject (409) */
  multitask?: Multitask;
  /** Cancel the run with `error: "timeout"` if still active this long after it starts. @defaultValue RUN_TIMEOUT_MS */
  timeout_ms?: number;
}

/** What starting or resuming a run answers: the run is queued for a worker. */
export interface RunTicket {
  run_id: string;
  session_id: string;
  status: 'queued';
}

/**
 * The application operations that start and unblock runs. The HTTP routes, the schedule
 * fires, the webhook bridge and the chat approval bridges all go through this one interface,
 * so they share validation, atomicity and error codes (`unknown_agent`, `conflict`,
 * `not_found`).
 */
export interface RunControl {
  /** `waited`: the caller waits for the run to stop (see NewRun.waited). */
  startRun(tenant: string, request: StartRunRequest, options?: { waited?: boolean }): Promise<RunTicket>;
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
}
