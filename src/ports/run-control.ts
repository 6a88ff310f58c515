import type { Approval, JsonObject } from '../domain/types.js';
import type { ApprovalDecision } from './store.js';

export interface StartRunRequest {
  agent_id: string;
  input?: JsonObject;
  /** Run on this session (created when absent); a new session id is minted when omitted. */
  session_id?: string;
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
  startRun(tenant: string, request: StartRunRequest): Promise<RunTicket>;
  /** Continue a failed, edited or decided session from its latest checkpoint. */
  resumeSession(tenant: string, sessionId: string): Promise<RunTicket>;
  /** Decide an approval atomically and enqueue the resume of its run. */
  answerApproval(tenant: string, approvalId: string, decision: ApprovalDecision): Promise<Approval>;
}
