import { AppError, conflict, idempotentRunGone, notFound } from '../../domain/errors.js';
import type { IdempotentStart } from '../../domain/idempotency.js';
import { newMetadata } from '../../domain/session-metadata.js';
import { nowIso } from '../../domain/time.js';
import { ACTIVE_RUN_STATUSES, TERMINAL_RUN_STATUSES, type Run } from '../../domain/types.js';
import type { ActiveRun, CreatedRun, NewRun, Page, Promotion, RunListOptions, RunStore, RunUpdate, UpdatedRun } from '../../ports/store.js';
import { decideRunStart } from '../shared/run-start.js';
import { MemoryIdempotencyKeys } from './idempotency-keys.js';
import { clone, frozen, newRecord, type MemoryTables, type SessionRecord } from './tables.js';

/** Where a stored run keeps its `graph_input`. */
const GRAPH_INPUT = Symbol('graph_input');

/** Runs in memory; a session has at most one active run (the rule of shared/run-start.ts). */
export class MemoryRunStore implements RunStore {
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

  async hasIdempotencyKey(tenant: string, key: IdempotentStart): Promise<boolean> {
    return this.keys.has(tenant, key);
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
        { id: newRun.session_id, agent_id: newRun.agent_id, tenant_id: tenant, created_at: now, updated_at: now, metadata: frozen(newMetadata(newRun.metadata)) },
        nowMs,
      );
    const current = existing?.currentRunId ? data.runs.get(existing.currentRunId) : undefined;
    const start = decideRunStart({ agentId: existing?.session.agent_id, currentStatus: current?.status, queuedBehind: existing?.behind.length ?? 0 }, newRun);
    if (start === 'behind') return this.queueBehind(tenant, record, newRun, now);
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
