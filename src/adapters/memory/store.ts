import { AppError, conflict, notFound } from '../../domain/errors.js';
import { sortSpans } from '../../domain/spans.js';
import { newId, nowIso } from '../../domain/time.js';
import {
  ACTIVE_RUN_STATUSES,
  type Approval,
  type Checkpoint,
  type JsonObject,
  type Run,
  type RunStatus,
  type Session,
  type Span,
} from '../../domain/types.js';
import type {
  ApprovalDecision,
  ApprovalStore,
  CheckpointWrite,
  NewApproval,
  NewRun,
  Page,
  RunStore,
  RunUpdate,
  SessionListOptions,
  SessionStore,
  Store,
} from '../../ports/store.js';
import { MemoryScheduleStore } from './schedule-store.js';

interface SessionRecord {
  session: Session;
  createdMs: number;
  checkpoints: Checkpoint[];
  spans: Span[];
  runIds: string[];
  currentRunId?: string;
}

interface TenantData {
  sessions: Map<string, SessionRecord>;
  runs: Map<string, Run>;
  approvals: Map<string, Approval>;
}

/**
 * The tables every part of the memory Store shares, per tenant. JavaScript runs each method
 * without interleaving, which gives the atomicity the Redis adapter gets from Lua.
 */
class MemoryTables {
  readonly tenants = new Map<string, TenantData>();

  data(tenant: string): TenantData {
    let data = this.tenants.get(tenant);
    if (!data) {
      data = { sessions: new Map(), runs: new Map(), approvals: new Map() };
      this.tenants.set(tenant, data);
    }
    return data;
  }

  /** The one rule of a run's status: set it with updated_at, and touch its session when current. */
  markRun(tenant: string, run: Run, status: RunStatus): void {
    run.status = status;
    run.updated_at = nowIso();
    const record = this.data(tenant).sessions.get(run.session_id);
    if (record?.currentRunId === run.id) record.session.updated_at = run.updated_at;
  }
}

/** Sessions, checkpoints and spans in memory. */
class MemorySessionStore implements SessionStore {
  constructor(private readonly t: MemoryTables) {}

  async getSession(tenant: string, sessionId: string): Promise<Session | null> {
    const record = this.t.data(tenant).sessions.get(sessionId);
    return record ? { ...record.session } : null;
  }

  async listSessions(tenant: string, options: SessionListOptions): Promise<Session[]> {
    return [...this.t.data(tenant).sessions.values()]
      .filter((r) => !options.agent_id || r.session.agent_id === options.agent_id)
      .sort((a, b) => b.createdMs - a.createdMs || (a.session.id < b.session.id ? 1 : a.session.id > b.session.id ? -1 : 0))
      .slice(options.offset, options.offset + options.limit)
      .map((r) => ({ ...r.session }));
  }

  async appendCheckpoint(tenant: string, sessionId: string, write: CheckpointWrite): Promise<Checkpoint> {
    const record = this.t.data(tenant).sessions.get(sessionId);
    if (!record) throw notFound('A checkpoint of this session');
    const latest = record.checkpoints.at(-1);
    const node = write.node_id ?? latest?.node_id;
    if (node === undefined) throw notFound('A checkpoint of this session');
    const seq = latest?.seq_num ?? 0;
    if (write.ifSeq !== undefined && write.ifSeq !== seq) {
      throw new AppError('precondition_failed', 'The latest checkpoint has another seq_num than If-Match names.');
    }
    const current = record.currentRunId ? this.t.data(tenant).runs.get(record.currentRunId) : undefined;
    if (write.rejectWhileRunning && current?.status === 'running') {
      throw conflict('A run of this session is running; patch it once the run is paused or finished.');
    }
    return clone(appendTo(record, node, write.patch, write.replace ?? false));
  }

  async getCheckpoint(tenant: string, sessionId: string): Promise<Checkpoint | null> {
    const latest = this.t.data(tenant).sessions.get(sessionId)?.checkpoints.at(-1);
    return latest ? clone(latest) : null;
  }

  async listCheckpoints(tenant: string, sessionId: string, page: Page): Promise<Checkpoint[]> {
    const all = this.t.data(tenant).sessions.get(sessionId)?.checkpoints ?? [];
    return clone([...all].reverse().slice(page.offset, page.offset + page.limit));
  }

  async addSpan(tenant: string, sessionId: string, span: Span): Promise<void> {
    this.t.data(tenant).sessions.get(sessionId)?.spans.push(clone(span));
  }

  async listSpans(tenant: string, sessionId: string): Promise<Span[]> {
    return sortSpans(clone(this.t.data(tenant).sessions.get(sessionId)?.spans ?? []));
  }}

/** Runs in memory; a session has at most one active run. */
class MemoryRunStore implements RunStore {
  constructor(private readonly t: MemoryTables) {}

  async createRun(tenant: string, newRun: NewRun): Promise<Run> {
    const data = this.t.data(tenant);
    const nowMs = Date.now();
    const now = nowIso(() => nowMs);
    let record = data.sessions.get(newRun.session_id);
    if (record) {
      if (record.session.agent_id !== newRun.agent_id) {
        throw conflict(`This session belongs to agent "${record.session.agent_id}".`);
      }
      const current = record.currentRunId ? data.runs.get(record.currentRunId) : undefined;
      if (current && ACTIVE_RUN_STATUSES.includes(current.status)) {
        throw conflict('This session already has a queued, running or interrupted run.');
      }
    } else {
      record = {
        session: { id: newRun.session_id, agent_id: newRun.agent_id, tenant_id: tenant, created_at: now, updated_at: now },
        createdMs: nowMs,
        checkpoints: [],
        spans: [],
        runIds: [],
      };
      data.sessions.set(newRun.session_id, record);
    }
    const run: Run = {
      id: newRun.run_id,
      session_id: newRun.session_id,
      agent_id: newRun.agent_id,
      status: 'queued',
      created_at: now,
      updated_at: now,
    };
    data.runs.set(run.id, run);
    record.runIds.push(run.id);
    record.currentRunId = run.id;
    record.session.updated_at = now;
    if (newRun.start) appendTo(record, newRun.start.node_id, newRun.start.input, false);
    return { ...run };
  }

  async getRun(tenant: string, runId: string): Promise<Run | null> {
    const run = this.t.data(tenant).runs.get(runId);
    return run ? { ...run } : null;
  }

  async listRuns(tenant: string, sessionId: string): Promise<Run[]> {
    const data = this.t.data(tenant);
    const ids = data.sessions.get(sessionId)?.runIds ?? [];
    return [...ids].reverse().flatMap((id) => {
      const run = data.runs.get(id);
      return run ? [{ ...run }] : [];
    });
  }

  async latestRun(tenant: string, sessionId: string): Promise<Run | null> {
    const id = this.t.data(tenant).sessions.get(sessionId)?.currentRunId;
    return id ? this.getRun(tenant, id) : null;
  }

  async updateRun(tenant: string, runId: string, update: RunUpdate): Promise<Run> {
    const from = update.from ?? [];
    const data = this.t.data(tenant);
    const run = data.runs.get(runId);
    if (!run) throw notFound('The run');
    if (from.length > 0 && !from.includes(run.status)) throw conflict(`The run is ${run.status}.`);
    this.t.markRun(tenant, run, update.status);
    if (update.error) run.error = update.error;
    else delete run.error;
    return { ...run };
  }}

/** Approval requests in memory; deciding changes the run's status in the same step. */
class MemoryApprovalStore implements ApprovalStore {
  constructor(private readonly t: MemoryTables) {}

  async createApproval(tenant: string, approval: NewApproval): Promise<Approval> {
    const { approvals, runs } = this.t.data(tenant);
    if (!approvals.has(approval.id)) {
      approvals.set(approval.id, { ...approval, status: 'pending' });
      const run = runs.get(approval.run_id);
      if (run) {
        this.t.markRun(tenant, run, 'interrupted');
        run.approval_id = approval.id;
      }
    }
    return { ...approvals.get(approval.id)! };
  }

  async getApproval(tenant: string, id: string): Promise<Approval | null> {
    const approval = this.t.data(tenant).approvals.get(id);
    return approval ? { ...approval } : null;
  }

  async listPendingApprovals(tenant: string): Promise<Approval[]> {
    return [...this.t.data(tenant).approvals.values()]
      .filter((a) => a.status === 'pending')
      .sort((a, b) => Date.parse(a.requested_at) - Date.parse(b.requested_at) || (a.id < b.id ? -1 : 1))
      .map((a) => ({ ...a }));
  }

  async decideApproval(tenant: string, id: string, decision: ApprovalDecision): Promise<Approval> {
    const approval = this.t.data(tenant).approvals.get(id);
    if (!approval) throw notFound('The approval request');
    if (approval.status !== 'pending') throw conflict('The approval request was already decided.');
    approval.status = decision.approved ? 'approved' : 'rejected';
    approval.comment = decision.comment ?? '';
    approval.decided_by = decision.decided_by;
    approval.decided_at = nowIso();
    const run = this.t.data(tenant).runs.get(approval.run_id);
    if (run?.status === 'interrupted') this.t.markRun(tenant, run, 'queued');
    return { ...approval };
  }

  async countPendingApprovals(): Promise<number> {
    let count = 0;
    for (const data of this.t.tenants.values()) {
      for (const approval of data.approvals.values()) if (approval.status === 'pending') count += 1;
    }
    return count;
  }}

/**
 * The Store port in process memory: the embedded mode's storage, composed of its parts on
 * shared tables. Same semantics as RedisStore (checked by the shared contract suite); values
 * are deep-copied in and out so callers can never mutate stored state.
 */
export class MemoryStore implements Store {
  private readonly tables = new MemoryTables();
  readonly sessions: SessionStore = new MemorySessionStore(this.tables);
  readonly runs: RunStore = new MemoryRunStore(this.tables);
  readonly approvals: ApprovalStore = new MemoryApprovalStore(this.tables);
  readonly schedules = new MemoryScheduleStore();

  async ping(): Promise<void> {}
}

/** Appends a checkpoint at `node` with `patch` merged into the latest (or an empty) state. */
function appendTo(record: SessionRecord, node: string, patch: JsonObject, replace: boolean): Checkpoint {
  const latest = record.checkpoints.at(-1);
  const base: JsonObject = replace || !latest ? {} : latest.state;
  const checkpoint: Checkpoint = {
    session_id: record.session.id,
    checkpoint_id: newId(),
    node_id: node,
    seq_num: (latest?.seq_num ?? 0) + 1,
    created_at: nowIso(),
    state: clone({ ...base, ...withoutUndefined(patch) }),
  };
  record.checkpoints.push(checkpoint);
  record.session.updated_at = checkpoint.created_at;
  return checkpoint;
}

function clone<T>(value: T): T {
  return structuredClone(value);
}

function withoutUndefined(patch: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
}
