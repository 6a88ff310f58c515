import { DEFAULT_STORAGE_LIMITS } from '../../domain/types.js';
import type { ApprovalStore, LeaseStore, RunStore, SessionStore, StorageLimits, StorageUsage, Store, TimerStore, SessionLatest, ThreadRow } from '../../ports/store.js';
import { MemoryApprovalStore } from './approval-store.js';
import type { MemoryGraphCheckpointStore } from './graph-checkpoints.js';
import { MemoryRunStore } from './run-store.js';
import { MemoryScheduleStore } from './schedule-store.js';
import { MemorySessionStore } from './session-store.js';
import { frozenJson, MemoryTables } from './tables.js';
import { MemoryLeaseStore, MemoryTimerStore } from './timer-store.js';

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
    this.timers = new MemoryTimerStore(this.tables);
    this.leases = new MemoryLeaseStore(() => this.tables.clock());
  }

  /** Whether the tenant has the session (the LangGraph checkpoints refuse writes for a gone one). */
  hasSession(tenant: string, sessionId: string): boolean {
    return this.tables.tenants.get(tenant)?.sessions.has(sessionId) ?? false;
  }

  /** Straight from the tables, with no promise per read (a search page asks this for dozens of sessions); every state, which costs no copy. */
  async latestOfSessions(tenant: string, sessionIds: readonly string[]): Promise<SessionLatest[]> {
    const data = this.tables.data(tenant);
    return sessionIds.map((id) => {
      const record = data.sessions.get(id);
      const run = record?.currentRunId ? data.runs.get(record.currentRunId) : undefined;
      const checkpoint = record?.checkpoints.at(-1);
      // As getRun and getCheckpoint hand them out: a copy of the run, the checkpoint's frozen state shared.
      return { run: run ? { ...run } : null, checkpoint: checkpoint ? { ...checkpoint } : null };
    });
  }

  /** Straight from the tables; a frozen state's and metadata's JSON is made once (they never change). */
  async listThreadRows(tenant: string, page: { offset: number; limit: number }): Promise<ThreadRow[]> {
    const data = this.tables.data(tenant);
    return data.byCreated.newestFirst(page.offset, page.limit).map((id): ThreadRow => {
      const { session, currentRunId, checkpoints } = data.sessions.get(id)!;
      const run = currentRunId ? data.runs.get(currentRunId) : undefined;
      const checkpoint = checkpoints.at(-1);
      return {
        id: session.id,
        agent_id: session.agent_id,
        created_at: session.created_at,
        updated_at: session.updated_at,
        metadata: frozenJson(session.metadata),
        run: run ? { status: run.status, ...(run.error === undefined ? {} : { error: run.error }), ...(run.seq_num === undefined ? {} : { seq_num: run.seq_num }) } : null,
        checkpoint: checkpoint ? { seq_num: checkpoint.seq_num, node_id: checkpoint.node_id, created_at: checkpoint.created_at, state: frozenJson(checkpoint.state) } : null,
      };
    });
  }

  async ping(): Promise<void> {}

  async usage(): Promise<StorageUsage> {
    let sessions = 0;
    for (const data of this.tables.tenants.values()) sessions += data.sessions.size;
    return { sessions, schedules: (await this.schedules.listAllSchedules()).length };
  }
}
