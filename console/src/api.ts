import { createClient, type AgentplaneClient } from '../../src/client/index.js';
import { ConsoleApiError } from './errors.js';
import type { Agent, Approval, ApprovalRequest, Checkpoint, HistoryRecord, JsonObject, Run, RunStatus, RunTicket, Schedule, Session, Span, TenantQueue } from './types.js';

/** The headers that carry the user's credential (none when authentication is off). */
export type AuthHeaders = Record<string, string>;

/** Resolves the body of a success of the typed client; rejects with a {@link ConsoleApiError} otherwise. */
async function ok<D>(call: Promise<{ data?: D; error?: unknown; response: Response }>): Promise<D> {
  const { data, error, response } = await call;
  if (error !== undefined || !response.ok) throw new ConsoleApiError(response, error);
  return data as D;
}

/**
 * The calls of the console, on the typed client (openapi-fetch over the OpenAPI document's
 * types) with the user's credential in headers, never in a URL.
 */
export class Api {
  readonly client: AgentplaneClient;

  constructor(readonly headers: AuthHeaders) {
    this.client = createClient({ baseUrl: location.origin, headers });
  }

  agents = async (): Promise<Agent[]> => (await ok(this.client.GET('/api/agents'))).agents;

  pending = async (limit = 500): Promise<Approval[]> =>
    (await ok(this.client.GET('/api/approval/pending', { params: { query: { limit } } }))).pending;

  /** One request, pending or decided (a viewer may read it, unlike the pending list). */
  approval = (id: string): Promise<ApprovalRequest> => ok(this.client.GET('/api/approvals/{id}', { params: { path: { id } } }));

  respond = (id: string, approved: boolean, comment: string): Promise<{ id: string; status: string }> =>
    ok(this.client.POST('/api/approval/respond', { body: { id, approved, ...(comment ? { comment } : {}) } }));

  sessions = async (query: { agent_id?: string; session_id?: string; limit: number; offset: number }): Promise<Session[]> =>
    (await ok(this.client.GET('/api/sessions', { params: { query } }))).sessions;

  /** The tenant's runs, newest first, filtered by status and agent, one page. */
  allRuns = async (query: { status?: RunStatus; agent_id?: string; limit: number; offset: number }): Promise<Run[]> =>
    (await ok(this.client.GET('/api/runs', { params: { query } }))).runs;

  /** The tenant's run queue: runs waiting for a worker slot and running, with its caps. */
  queue = (): Promise<TenantQueue> => ok(this.client.GET('/api/queue'));

  /** Decided requests (approved, rejected, cancelled with their run), newest decision first. */
  decided = async (query: { limit: number; offset: number }): Promise<ApprovalRequest[]> =>
    (await ok(this.client.GET('/api/approvals', { params: { query: { status: 'decided', ...query } } }))).approvals;

  state = (sessionId: string): Promise<Checkpoint> => ok(this.client.GET('/api/sessions/state', { params: { query: { session_id: sessionId } } }));

  /** Shallow-merges `patch` if the latest checkpoint is still `ifSeq` (412 otherwise). */
  patchState = (sessionId: string, patch: JsonObject, ifSeq: number): Promise<Checkpoint> =>
    ok(
      this.client.POST('/api/sessions/state', {
        params: { query: { session_id: sessionId } },
        body: { state: patch },
        headers: { 'If-Match': `"${ifSeq}"` },
      }),
    );

  history = (sessionId: string, offset = 0, limit = 20): Promise<{ checkpoints: Checkpoint[]; next_offset?: number }> =>
    ok(this.client.GET('/api/sessions/history', { params: { query: { session_id: sessionId, limit, offset } } }));

  resume = (sessionId: string): Promise<RunTicket> => ok(this.client.POST('/api/sessions/resume', { params: { query: { session_id: sessionId } } }));

  traces = async (sessionId: string): Promise<Span[]> =>
    (await ok(this.client.GET('/api/traces', { params: { query: { session_id: sessionId, limit: 1000 } } }))).traces;

  runs = async (sessionId: string, limit = 50): Promise<Run[]> =>
    (await ok(this.client.GET('/api/runs', { params: { query: { session_id: sessionId, limit } } }))).runs;

  startRun = (body: { agent_id: string; input: JsonObject; session_id?: string }): Promise<RunTicket> => ok(this.client.POST('/api/runs', { body }));

  cancelRun = (runId: string): Promise<Run> => ok(this.client.POST('/api/runs/{id}/cancel', { params: { path: { id: runId } } }));

  schedules = async (limit = 100): Promise<Schedule[]> =>
    (await ok(this.client.GET('/api/schedules', { params: { query: { limit } } }))).schedules;

  createSchedule = (body: { agent_id: string; cron_expr: string; timezone: string; input: JsonObject; new_session: boolean }): Promise<Schedule> =>
    ok(this.client.POST('/api/schedules', { body }));

  deleteSchedule = (id: string): Promise<unknown> => ok(this.client.DELETE('/api/schedules/{id}', { params: { path: { id } } }));

  scheduleHistory = async (id: string): Promise<HistoryRecord[]> =>
    (await ok(this.client.GET('/api/schedules/{id}/history', { params: { path: { id } } }))).history;
}
