import { AppError, conflict, idempotentRunGone, notFound, stateTooLarge, stateTooManyKeys } from '../../domain/errors.js';
import { approvalJson } from '../../domain/approval-json.js';
import { mergeMetadata, newMetadata } from '../../domain/session-metadata.js';
import { sortSpans } from '../../domain/spans.js';
import type { MemoryGraphCheckpointStore } from './graph-checkpoints.js';
import { MemoryIdempotencyKeys } from './idempotency-keys.js';
import { newId, nowIso } from '../../domain/time.js';
import {
  ACTIVE_RUN_STATUSES,
  DEFAULT_STORAGE_LIMITS,
  MAX_QUEUED_BEHIND,
  TERMINAL_RUN_STATUSES,
  type Approval,
  type Checkpoint,
  type JsonObject,
  type Run,
  type RunStatus,
  type Session,
  type Span,
} from '../../domain/types.js';
import type {
  ActiveRun,
  ApprovalDecision,
  CreatedRun,
  DueTimer,
  LeaseStore,
  Promotion,
  TimerStore,
  UpdatedRun,
  ApprovalStore,
  BytePage,
  CheckpointMeta,
  CheckpointPage,
  CheckpointWrite,
  NewApproval,
  NewRun,
  NewSession,
  Page,
  RunListOptions,
  RunStore,
  RunUpdate,
  SessionListOptions,
  SessionStore,
  StorageLimits,
  StorageUsage,
  Store,
} from '../../ports/store.js';
import { RunIndex } from './run-index.js';
import { MemoryScheduleStore } from './schedule-store.js';
import { SortedIndex } from './sorted-index.js';

interface SessionRecord {
  session: Session;
  createdMs: number;
  /** Last write (ms): what expiry compares. */
  touchedMs: number;
  /** Retained checkpoints, oldest first; the last is the latest. */
  checkpoints: Checkpoint[];
  /** JSON bytes of the latest state's key/value pairs, as the Redis adapter counts them. */
  stateBytes: number;
  spans: Span[];
  runIds: string[];
  approvalIds: Set<string>;
  currentRunId?: string;
  /** Runs queued behind the current one (`multitask: "enqueue"`), oldest first. */
  behind: string[];
}

interface TenantData {
  sessions: Map<string, SessionRecord>;
  runs: Map<string, Run>;
  approvals: Map<string, Approval>;
  /** Session ids by (created_at, id): listing reads a page from the newest end. */
  byCreated: SortedIndex;
  /** The same per agent. */
  byAgent: Map<string, SortedIndex>;
  /** Pending approval ids by (requested_at, id), oldest first. */
  pending: SortedIndex;
  /** Decided approval ids by (decided_at, id), newest first. */
  decided: SortedIndex;
  /** The tenant's runs by (created_at, id): all, per status, per agent, per both. */
  runIndex: RunIndex;
  /** Ids of the runs queued, running or interrupted. */
  active: Set<string>;
  /** The first checkpoint of each run queued behind, written when it becomes current. */
  starts: Map<string, { node_id: string; input: JsonObject }>;
}

/**
 * The tables every part of the memory Store shares, per tenant. JavaScript runs each method
 * without interleaving, which gives the atomicity the Redis adapter gets from Lua.
 */
class MemoryTables {
  readonly tenants = new Map<string, TenantData>();
  /** Run deadlines and approval expiries by `<kind> <tenant> <id>`. */
  readonly timers = new Map<string, DueTimer>();

  constructor(
    readonly limits: StorageLimits,
    readonly clock: () => number,
  ) {}

  data(tenant: string): TenantData {
    let data = this.tenants.get(tenant);
    if (!data) {
      data = {
        sessions: new Map(),
        runs: new Map(),
        approvals: new Map(),
        byCreated: new SortedIndex(),
        byAgent: new Map(),
        pending: new SortedIndex(),
        decided: new SortedIndex(),
        runIndex: new RunIndex(),
        active: new Set(),
        starts: new Map(),
      };
      this.tenants.set(tenant, data);
    }
    return data;
  }

  now(): string {
    return nowIso(this.clock);
  }

  /**
   * The one rule of a run's status: set it with updated_at, touch its session when current,
   * keep the active set; a terminal status closes the run's pending approval (by `by`), takes
   * it out of its session's queue and drops its deadline.
   */
  markRun(tenant: string, run: Run, status: RunStatus, by = 'system'): void {
    const nowMs = this.clock();
    const data = this.data(tenant);
    const from = run.status;
    run.status = status;
    run.updated_at = nowIso(() => nowMs);
    data.runIndex.move(run, from);
    const record = data.sessions.get(run.session_id);
    if (record?.currentRunId === run.id) {
      record.session.updated_at = run.updated_at;
      if (status !== 'queued' && status !== 'running') run.seq_num = record.checkpoints.at(-1)?.seq_num ?? 0;
    }
    // A run's end is its session's activity (expiry counts from the last of these).
    if (record && !ACTIVE_RUN_STATUSES.includes(status)) record.touchedMs = nowMs;
    if (ACTIVE_RUN_STATUSES.includes(status)) {
      data.active.add(run.id);
      return;
    }
    data.active.delete(run.id);
    if (!TERMINAL_RUN_STATUSES.includes(status)) return;
    // Every pending request of the run: a graph's parallel interrupts pause it on several.
    const prefix = `${run.id}.`;
    for (const id of record?.approvalIds ?? (run.approval_id ? [run.approval_id] : [])) {
      const approval = id.startsWith(prefix) ? data.approvals.get(id) : undefined;
      if (approval?.status !== 'pending') continue;
      approval.status = 'cancelled';
      approval.decided_by = by;
      approval.decided_at = run.updated_at;
      data.pending.delete(approval.requested_at, approval.id);
      data.decided.add(approval.decided_at, approval.id);
    }
    if (record) record.behind = record.behind.filter((id) => id !== run.id);
    data.starts.delete(run.id);
    this.timers.delete(timerKey('run', tenant, run.id));
  }

  setTimer(timer: DueTimer): void {
    this.timers.set(timerKey(timer.kind, timer.tenant, timer.id), timer);
  }

  /** Appends a checkpoint at `node` with `patch` merged into the latest state, within the limits. */
  append(record: SessionRecord, node: string, patch: JsonObject): Checkpoint {
    const latest = record.checkpoints.at(-1);
    const base: JsonObject = latest ? latest.state : {};
    const changes = withoutUndefined(patch);
    let bytes = record.stateBytes;
    let keys = Object.keys(base).length;
    for (const [key, value] of Object.entries(changes)) {
      if (Object.hasOwn(base, key)) bytes -= JSON.stringify(base[key]).length;
      else {
        bytes += JSON.stringify(key).length + 2;
        keys += 1;
      }
      bytes += JSON.stringify(value).length;
    }
    if (bytes > this.limits.maxStateBytes) throw stateTooLarge();
    if (keys > this.limits.maxStateKeys) throw stateTooManyKeys();
    const nowMs = this.clock();
    const checkpoint: Checkpoint = {
      session_id: record.session.id,
      checkpoint_id: newId(),
      node_id: node,
      seq_num: (latest?.seq_num ?? 0) + 1,
      created_at: nowIso(() => nowMs),
      state: clone({ ...base, ...changes }),
    };
    record.checkpoints.push(checkpoint);
    if (record.checkpoints.length > this.limits.checkpointsRetain) record.checkpoints.splice(0, record.checkpoints.length - this.limits.checkpointsRetain);
    record.stateBytes = bytes;
    record.session.updated_at = checkpoint.created_at;
    // An edit between runs is activity; during a run, its creation and end are.
    const status = record.currentRunId ? this.data(record.session.tenant_id).runs.get(record.currentRunId)?.status : undefined;
    if (status !== 'queued' && status !== 'running') record.touchedMs = nowMs;
    return checkpoint;
  }

  /** Stores a new session's record, listed (and, when bound to an agent, in its agent's index). */
  addSession(tenant: string, record: SessionRecord): SessionRecord {
    const data = this.data(tenant);
    const { session } = record;
    data.sessions.set(session.id, record);
    data.byCreated.add(session.created_at, session.id);
    if (session.agent_id !== '') this.indexByAgent(tenant, record);
    return record;
  }

  /** Adds the session to its agent's index (at its created_at, as the tenant's index has it). */
  indexByAgent(tenant: string, record: SessionRecord): void {
    const data = this.data(tenant);
    const { agent_id: agent, created_at: createdAt, id } = record.session;
    let byAgent = data.byAgent.get(agent);
    if (!byAgent) data.byAgent.set(agent, (byAgent = new SortedIndex()));
    byAgent.add(createdAt, id);
  }

  /** Removes a session with everything of it; answers the pending approvals removed. */
  remove(tenant: string, record: SessionRecord): void {
    const data = this.data(tenant);
    const { session } = record;
    for (const id of record.approvalIds) {
      const approval = data.approvals.get(id);
      if (approval?.status === 'pending') data.pending.delete(approval.requested_at, id);
      if (approval?.decided_at) data.decided.delete(approval.decided_at, id);
      data.approvals.delete(id);
    }
    for (const id of record.runIds) {
      const run = data.runs.get(id);
      if (run) data.runIndex.remove(run);
      data.runs.delete(id);
      data.active.delete(id);
      data.starts.delete(id);
    }
    data.byCreated.delete(session.created_at, session.id);
    data.byAgent.get(session.agent_id)?.delete(session.created_at, session.id);
    data.sessions.delete(session.id);
  }
}

/** Sessions, checkpoints and spans in memory. */
class MemorySessionStore implements SessionStore {
  constructor(
    private readonly t: MemoryTables,
    private readonly onRemoved: (tenant: string, sessionId: string, runIds: readonly string[]) => void,
  ) {}

  async getSession(tenant: string, sessionId: string): Promise<Session | null> {
    const record = this.t.data(tenant).sessions.get(sessionId);
    return record ? clone(record.session) : null;
  }

  async listSessions(tenant: string, options: SessionListOptions): Promise<Session[]> {
    const data = this.t.data(tenant);
    const index = options.agent_id ? data.byAgent.get(options.agent_id) : data.byCreated;
    return (index?.newestFirst(options.offset, options.limit) ?? []).map((id) => clone(data.sessions.get(id)!.session));
  }

  async createSession(tenant: string, newSession: NewSession): Promise<Session> {
    const metadata = newMetadata(newSession.metadata);
    if (this.t.data(tenant).sessions.has(newSession.session_id)) throw conflict('The session already exists.');
    const nowMs = this.t.clock();
    const now = nowIso(() => nowMs);
    const session: Session = { id: newSession.session_id, agent_id: '', tenant_id: tenant, created_at: now, updated_at: now, metadata };
    return clone(this.t.addSession(tenant, newRecord(session, nowMs)).session);
  }

  async updateSessionMetadata(tenant: string, sessionId: string, patch: JsonObject): Promise<Session> {
    const record = this.t.data(tenant).sessions.get(sessionId);
    if (!record) throw notFound('The session');
    record.session.metadata = mergeMetadata(record.session.metadata, patch);
    const nowMs = this.t.clock();
    record.session.updated_at = nowIso(() => nowMs);
    record.touchedMs = nowMs;
    return clone(record.session);
  }

  async appendCheckpoint(tenant: string, sessionId: string, write: CheckpointWrite): Promise<CheckpointMeta & { state?: JsonObject }> {
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
    if (write.runId !== undefined && (current?.id !== write.runId || current.status !== 'running')) {
      throw conflict('The run is no longer running.');
    }
    const { state, ...meta } = this.t.append(record, node, write.patch);
    return write.withState ? { ...meta, state: clone(state) } : meta;
  }

  async getCheckpoint(tenant: string, sessionId: string, seq?: number): Promise<Checkpoint | null> {
    const checkpoints = this.t.data(tenant).sessions.get(sessionId)?.checkpoints ?? [];
    const found = seq === undefined ? checkpoints.at(-1) : checkpoints.find((c) => c.seq_num === seq);
    return found ? clone(found) : null;
  }

  async listCheckpoints(tenant: string, sessionId: string, page: BytePage): Promise<CheckpointPage> {
    const all = this.t.data(tenant).sessions.get(sessionId)?.checkpoints ?? [];
    const checkpoints: Checkpoint[] = [];
    let bytes = 0;
    let index = all.length - 1 - page.offset;
    for (; index >= 0 && checkpoints.length < page.limit; index -= 1) {
      const size = JSON.stringify(all[index]).length;
      if (checkpoints.length > 0 && bytes + size > page.maxBytes) break;
      bytes += size;
      checkpoints.push(clone(all[index]!));
      if (bytes >= page.maxBytes) {
        index -= 1;
        break;
      }
    }
    return { checkpoints, more: index >= 0 };
  }

  async addSpan(tenant: string, sessionId: string, span: Span): Promise<void> {
    const spans = this.t.data(tenant).sessions.get(sessionId)?.spans;
    if (!spans) return;
    spans.push(clone(span));
    if (spans.length > this.t.limits.spansRetain) spans.splice(0, spans.length - this.t.limits.spansRetain);
  }

  async listSpans(tenant: string, sessionId: string, page: Page): Promise<Span[]> {
    const spans = this.t.data(tenant).sessions.get(sessionId)?.spans ?? [];
    return sortSpans(clone(spans.slice(page.offset, page.offset + page.limit)));
  }

  async deleteSession(tenant: string, sessionId: string): Promise<void> {
    const data = this.t.data(tenant);
    const record = data.sessions.get(sessionId);
    if (!record) throw notFound('The session');
    const current = record.currentRunId ? data.runs.get(record.currentRunId) : undefined;
    if (current && ACTIVE_RUN_STATUSES.includes(current.status)) {
      throw conflict('The session has a queued, running or interrupted run; cancel it or let it finish first.');
    }
    this.t.remove(tenant, record);
    this.onRemoved(tenant, sessionId, record.runIds);
  }

  async expireSessions(cutoffMs: number, limit: number): Promise<number> {
    let removed = 0;
    for (const [tenant, data] of this.t.tenants) {
      for (const record of [...data.sessions.values()]) {
        if (removed >= limit) return removed;
        if (record.touchedMs > cutoffMs) continue;
        const status = record.currentRunId ? data.runs.get(record.currentRunId)?.status : undefined;
        if (status === 'queued' || status === 'running' || record.behind.length > 0) continue;
        this.t.remove(tenant, record);
        this.onRemoved(tenant, record.session.id, record.runIds);
        removed += 1;
      }
    }
    return removed;
  }
}

/** Where a stored run keeps its `graph_input`. */
const GRAPH_INPUT = Symbol('graph_input');

/** Runs in memory; a session has at most one active run. */
class MemoryRunStore implements RunStore {
  private readonly keys = new MemoryIdempotencyKeys(() => this.t.clock());

  constructor(
    private readonly t: MemoryTables,
    private readonly onDropped: (tenant: string, runIds: readonly string[]) => void,
  ) {}

  async getRunInput(tenant: string, runId: string): Promise<string | null> {
    const run = this.t.data(tenant).runs.get(runId) as (Run & { [GRAPH_INPUT]?: string }) | undefined;
    return run?.[GRAPH_INPUT] ?? null;
  }

  async createRun(tenant: string, newRun: NewRun): Promise<CreatedRun> {
    const replayed = this.replay(tenant, newRun);
    if (replayed) return replayed;
    const created = this.create(tenant, newRun);
    if (newRun.idempotency) this.keys.remember(tenant, newRun.idempotency, created.id);
    return created;
  }

  /** The run an earlier start with the same Idempotency-Key created, as it is now (nothing is written). */
  private replay(tenant: string, newRun: NewRun): CreatedRun | undefined {
    const runId = newRun.idempotency && this.keys.find(tenant, newRun.idempotency);
    if (runId === undefined) return undefined;
    const data = this.t.data(tenant);
    const run = data.runs.get(runId);
    if (!run) throw idempotentRunGone();
    const behind = run.status === 'queued' && data.sessions.get(run.session_id)?.currentRunId !== run.id;
    return { ...run, replayed: true, ...(behind ? { behind } : {}) };
  }

  private create(tenant: string, newRun: NewRun): CreatedRun {
    const data = this.t.data(tenant);
    const nowMs = this.t.clock();
    const now = nowIso(() => nowMs);
    const existing = data.sessions.get(newRun.session_id);
    // A new session's record first (its metadata checked): a refused start leaves nothing behind.
    const record =
      existing ??
      newRecord(
        { id: newRun.session_id, agent_id: newRun.agent_id, tenant_id: tenant, created_at: now, updated_at: now, metadata: newMetadata(newRun.metadata) },
        nowMs,
      );
    let behind = false;
    if (existing) {
      if (existing.session.agent_id !== '' && existing.session.agent_id !== newRun.agent_id) {
        throw conflict(`This session belongs to agent "${existing.session.agent_id}".`);
      }
      const current = existing.currentRunId ? data.runs.get(existing.currentRunId) : undefined;
      if (current && ACTIVE_RUN_STATUSES.includes(current.status)) {
        if (!newRun.behind) throw conflict('This session already has a queued, running or interrupted run.');
        if (existing.behind.length >= MAX_QUEUED_BEHIND) throw conflict(`This session already has ${MAX_QUEUED_BEHIND} runs queued behind its active one.`);
        behind = true;
      }
    }
    if (behind) return this.queueBehind(tenant, record, newRun, now);
    // The checkpoint first: it checks the limits, so a refused input leaves nothing behind.
    if (newRun.start) this.t.append(record, newRun.start.node_id, newRun.start.input);
    if (!existing) this.t.addSession(tenant, record);
    else if (record.session.agent_id === '') {
      // A session created before its first run belongs to that run's agent from now on.
      record.session.agent_id = newRun.agent_id;
      this.t.indexByAgent(tenant, record);
    }
    const run = this.newRun(tenant, newRun, now);
    record.runIds.push(run.id);
    record.currentRunId = run.id;
    // The newest runs are kept; older ones go with their decided approvals and schedule links.
    this.drop(tenant, record, record.runIds.splice(0, Math.max(0, record.runIds.length - this.t.limits.runsRetain)));
    record.session.updated_at = now;
    record.touchedMs = nowMs;
    return { ...run };
  }

  /** Removes runs taken out of their session's list, with their decided approvals, indexes and schedule links. */
  private drop(tenant: string, record: SessionRecord, runIds: readonly string[]): void {
    const data = this.t.data(tenant);
    for (const id of runIds) {
      const droppedRun = data.runs.get(id);
      if (droppedRun) data.runIndex.remove(droppedRun);
      data.runs.delete(id);
      for (const approvalId of record.approvalIds) {
        const approval = data.approvals.get(approvalId);
        if (approval?.run_id === id && approval.status !== 'pending') {
          if (approval.decided_at) data.decided.delete(approval.decided_at, approvalId);
          data.approvals.delete(approvalId);
          record.approvalIds.delete(approvalId);
        }
      }
    }
    if (runIds.length > 0) this.onDropped(tenant, runIds);
  }

  async deleteRun(tenant: string, runId: string): Promise<void> {
    const data = this.t.data(tenant);
    const run = data.runs.get(runId);
    const record = run && data.sessions.get(run.session_id);
    if (!run || !record) throw notFound('The run');
    if (ACTIVE_RUN_STATUSES.includes(run.status)) throw conflict(`The run is ${run.status}.`);
    record.runIds.splice(record.runIds.indexOf(runId), 1);
    if (record.currentRunId === runId) delete record.currentRunId;
    this.drop(tenant, record, [runId]);
  }

  private newRun(tenant: string, newRun: NewRun, now: string): Run {
    const data = this.t.data(tenant);
    const run: Run = {
      id: newRun.run_id,
      session_id: newRun.session_id,
      agent_id: newRun.agent_id,
      status: 'queued',
      created_at: now,
      updated_at: now,
    };
    // Kept on the stored run, not copied out with it (a non-enumerable property), gone with it.
    if (newRun.graph_input !== undefined) Object.defineProperty(run, GRAPH_INPUT, { value: newRun.graph_input, enumerable: false });
    if (newRun.deadline_ms !== undefined) {
      run.deadline_at = new Date(newRun.deadline_ms).toISOString();
      this.t.setTimer({ kind: 'run', tenant, id: run.id, dueMs: newRun.deadline_ms });
    }
    data.runs.set(run.id, run);
    data.runIndex.add(run);
    data.active.add(run.id);
    return run;
  }

  private queueBehind(tenant: string, record: SessionRecord, newRun: NewRun, now: string): CreatedRun {
    const run = this.newRun(tenant, newRun, now);
    record.runIds.push(run.id);
    record.behind.push(run.id);
    if (newRun.start) this.t.data(tenant).starts.set(run.id, clone(newRun.start));
    return { ...run, behind: true };
  }

  async promoteNext(tenant: string, sessionId: string): Promise<Promotion> {
    const data = this.t.data(tenant);
    const record = data.sessions.get(sessionId);
    const failed: Run[] = [];
    if (!record) return { started: null, failed };
    const current = record.currentRunId ? data.runs.get(record.currentRunId) : undefined;
    if (current && ACTIVE_RUN_STATUSES.includes(current.status)) return { started: null, failed };
    while (record.behind.length > 0) {
      const run = data.runs.get(record.behind.shift()!);
      if (!run) continue;
      const start = data.starts.get(run.id);
      data.starts.delete(run.id);
      try {
        if (start) this.t.append(record, start.node_id, start.input);
      } catch (error) {
        const limit = error instanceof AppError && error.code === 'payload_too_large' ? 'size' : 'key';
        run.error = `The run input would take the session state past its ${limit} limit.`;
        this.t.markRun(tenant, run, 'failed');
        failed.push({ ...run });
        continue;
      }
      record.currentRunId = run.id;
      this.t.markRun(tenant, run, 'queued');
      return { started: { ...run }, failed };
    }
    return { started: null, failed };
  }

  async listActiveRuns(updatedBeforeMs: number, limit: number): Promise<ActiveRun[]> {
    const out: ActiveRun[] = [];
    for (const [tenant, data] of this.t.tenants) {
      for (const id of data.active) {
        const run = data.runs.get(id);
        if (!run || Date.parse(run.updated_at) > updatedBeforeMs) continue;
        const current = data.sessions.get(run.session_id)?.currentRunId === run.id;
        out.push({ tenant, run: { ...run }, behind: !current });
        if (out.length >= limit) return out;
      }
    }
    return out;
  }

  async getRun(tenant: string, runId: string): Promise<Run | null> {
    const run = this.t.data(tenant).runs.get(runId);
    return run ? { ...run } : null;
  }

  async listRuns(tenant: string, sessionId: string, page: Page): Promise<Run[]> {
    const data = this.t.data(tenant);
    const ids = data.sessions.get(sessionId)?.runIds ?? [];
    const end = ids.length - page.offset;
    return ids
      .slice(Math.max(0, end - page.limit), Math.max(0, end))
      .reverse()
      .flatMap((id) => {
        const run = data.runs.get(id);
        return run ? [{ ...run }] : [];
      });
  }

  async findRuns(tenant: string, options: RunListOptions): Promise<Run[]> {
    const data = this.t.data(tenant);
    const { offset, limit, session_id: sessionId } = options;
    if (sessionId === undefined) return data.runIndex.page(options, offset, limit).map((id) => ({ ...data.runs.get(id)! }));
    const matches = (run: Run | undefined): run is Run =>
      run !== undefined && (options.status === undefined || run.status === options.status) && (options.agent_id === undefined || run.agent_id === options.agent_id);
    const ids = [...(data.sessions.get(sessionId)?.runIds ?? [])].reverse();
    return ids
      .map((id) => data.runs.get(id))
      .filter(matches)
      .slice(offset, offset + limit)
      .map((run) => ({ ...run }));
  }

  async latestRun(tenant: string, sessionId: string): Promise<Run | null> {
    const id = this.t.data(tenant).sessions.get(sessionId)?.currentRunId;
    return id ? this.getRun(tenant, id) : null;
  }

  async updateRun(tenant: string, runId: string, update: RunUpdate): Promise<UpdatedRun> {
    const from = update.from ?? [];
    const data = this.t.data(tenant);
    const run = data.runs.get(runId);
    if (!run) throw notFound('The run');
    if (from.length > 0 && !from.includes(run.status)) throw conflict(`The run is ${run.status}.`);
    this.t.markRun(tenant, run, update.status, update.by);
    if (update.error) run.error = update.error;
    else delete run.error;
    const record = data.sessions.get(run.session_id);
    const waiting = TERMINAL_RUN_STATUSES.includes(run.status) && record?.currentRunId === run.id && record.behind.length > 0;
    return waiting ? { ...run, queued_behind: true } : { ...run };
  }
}

/** Approval requests in memory; deciding changes the run's status in the same step. */
class MemoryApprovalStore implements ApprovalStore {
  constructor(private readonly t: MemoryTables) {}

  async createApproval(tenant: string, approval: NewApproval): Promise<Approval> {
    const { payload, ...request } = approval;
    const json = payload === undefined ? undefined : approvalJson('payload', payload);
    const data = this.t.data(tenant);
    const existing = data.approvals.get(approval.id);
    if (existing?.status === 'pending') {
      // Asked again while still pending (a run resumed while other requests of its pause remain
      // unanswered): a running run pauses on it again.
      const run = data.runs.get(approval.run_id);
      if (run && (run.status === 'running' || run.status === 'queued')) {
        run.approval_id = approval.id;
        this.t.markRun(tenant, run, 'interrupted');
      }
    } else if (!existing) {
      const run = data.runs.get(approval.run_id);
      if (run && !ACTIVE_RUN_STATUSES.includes(run.status)) throw conflict(`The run is ${run.status}.`);
      // Kept as JSON gives it back (as on Redis), a copy the caller cannot change.
      data.approvals.set(approval.id, { ...request, status: 'pending', ...(json === undefined ? {} : { payload: JSON.parse(json) as unknown }) });
      data.pending.add(approval.requested_at, approval.id);
      data.sessions.get(approval.session_id)?.approvalIds.add(approval.id);
      if (approval.expires_at) this.t.setTimer({ kind: 'approval', tenant, id: approval.id, dueMs: Date.parse(approval.expires_at) });
      if (run) {
        run.approval_id = approval.id;
        this.t.markRun(tenant, run, 'interrupted');
      }
    }
    return structuredClone(data.approvals.get(approval.id)!);
  }

  async getApproval(tenant: string, id: string): Promise<Approval | null> {
    const approval = this.t.data(tenant).approvals.get(id);
    return approval ? structuredClone(approval) : null;
  }

  async listPendingApprovals(tenant: string, page: Page): Promise<Approval[]> {
    const data = this.t.data(tenant);
    return data.pending.oldestFirst(page.offset, page.limit).map((id) => structuredClone(data.approvals.get(id)!));
  }

  async listDecidedApprovals(tenant: string, page: Page): Promise<Approval[]> {
    const data = this.t.data(tenant);
    return data.decided.newestFirst(page.offset, page.limit).map((id) => structuredClone(data.approvals.get(id)!));
  }

  async decideApproval(tenant: string, id: string, decision: ApprovalDecision): Promise<Approval> {
    const resume = decision.resume === undefined ? undefined : approvalJson('resume', decision.resume);
    const data = this.t.data(tenant);
    const approval = data.approvals.get(id);
    if (!approval) throw notFound('The approval request');
    if (approval.status !== 'pending') throw conflict('The approval request was already decided.');
    approval.status = decision.approved ? 'approved' : 'rejected';
    approval.comment = decision.comment ?? '';
    if (resume !== undefined) approval.resume = JSON.parse(resume) as unknown;
    approval.decided_by = decision.decided_by;
    approval.decided_at = this.t.now();
    data.pending.delete(approval.requested_at, id);
    data.decided.add(approval.decided_at, id);
    this.t.timers.delete(timerKey('approval', tenant, id));
    const run = data.runs.get(approval.run_id);
    if (run?.status === 'interrupted') this.t.markRun(tenant, run, 'queued');
    return structuredClone(approval);
  }

  async countPendingApprovals(): Promise<number> {
    let count = 0;
    for (const data of this.t.tenants.values()) count += data.pending.size;
    return count;
  }
}

export interface MemoryStoreOptions {
  /** @defaultValue {@link DEFAULT_STORAGE_LIMITS} */
  limits?: Partial<StorageLimits>;
  /** The time writes are stamped with and expiry compares against. @defaultValue Date.now */
  clock?: () => number;
  /** The LangGraph checkpoints whose thread goes with its session (deleted or expired). */
  graphCheckpoints?: MemoryGraphCheckpointStore;
}

/**
 * The Store port in process memory: the embedded mode's storage, composed of its parts on
 * shared tables. Same semantics as RedisStore (checked by the shared contract suite); values
 * are deep-copied in and out so callers can never mutate stored state. Lists are read from
 * ordered indexes, so a page costs O(page), not O(all).
 */
export class MemoryStore implements Store {
  private readonly tables: MemoryTables;
  readonly sessions: SessionStore;
  readonly runs: RunStore;
  readonly approvals: ApprovalStore;
  readonly schedules = new MemoryScheduleStore();
  readonly timers: TimerStore;
  readonly leases: LeaseStore;

  constructor(options: MemoryStoreOptions = {}) {
    this.tables = new MemoryTables({ ...DEFAULT_STORAGE_LIMITS, ...options.limits }, options.clock ?? Date.now);
    this.sessions = new MemorySessionStore(this.tables, (tenant, sessionId, runIds) => {
      this.schedules.forgetRuns(tenant, runIds);
      options.graphCheckpoints?.removeThread(tenant, sessionId);
    });
    this.runs = new MemoryRunStore(this.tables, (tenant, runIds) => this.schedules.forgetRuns(tenant, runIds));
    this.approvals = new MemoryApprovalStore(this.tables);
    const tables = this.tables;
    this.timers = {
      async due(nowMs, limit) {
        return [...tables.timers.values()]
          .filter((timer) => timer.dueMs <= nowMs)
          .sort((a, b) => a.dueMs - b.dueMs)
          .slice(0, limit)
          .map((timer) => ({ ...timer }));
      },
      async clear(timer) {
        const key = timerKey(timer.kind, timer.tenant, timer.id);
        if (tables.timers.get(key)?.dueMs === timer.dueMs) tables.timers.delete(key);
      },
    };
    const leases = new Map<string, number>();
    this.leases = {
      async acquire(name, ttlMs) {
        const now = tables.clock();
        if ((leases.get(name) ?? 0) > now) return false;
        leases.set(name, now + ttlMs);
        return true;
      },
    };
  }

  async ping(): Promise<void> {}

  async usage(): Promise<StorageUsage> {
    let sessions = 0;
    for (const data of this.tables.tenants.values()) sessions += data.sessions.size;
    return { sessions, schedules: (await this.schedules.listAllSchedules()).length };
  }
}

/** The record of a session with nothing in it yet. */
function newRecord(session: Session, nowMs: number): SessionRecord {
  return { session, createdMs: nowMs, touchedMs: nowMs, checkpoints: [], stateBytes: 0, spans: [], runIds: [], approvalIds: new Set(), behind: [] };
}

function timerKey(kind: DueTimer['kind'], tenant: string, id: string): string {
  return `${kind} ${tenant} ${id}`;
}

function clone<T>(value: T): T {
  return structuredClone(value);
}

function withoutUndefined(patch: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
}
