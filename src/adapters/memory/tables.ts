import { metadataPairs } from '../../domain/metadata-pairs.js';
import { stateTooLarge, stateTooManyKeys } from '../../domain/errors.js';
import { newId, nowIso } from '../../domain/time.js';
import {
  ACTIVE_RUN_STATUSES,
  TERMINAL_RUN_STATUSES,
  type Approval,
  type Checkpoint,
  type JsonObject,
  type Run,
  type RunStatus,
  type Session,
  type Span,
} from '../../domain/types.js';
import type { DueTimer, StorageLimits } from '../../ports/store.js';
import { RunIndex } from './run-index.js';
import { SortedIndex } from './sorted-index.js';

/**
 * The tables of the memory Store (the embedded mode's storage), shared by its session, run and
 * approval stores: what the Redis adapter keeps in keys (keys.ts) and changes in Lua.
 */

export interface SessionRecord {
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

export interface TenantData {
  sessions: Map<string, SessionRecord>;
  runs: Map<string, Run>;
  approvals: Map<string, Approval>;
  /** Session ids by (created_at, id): listing reads a page from the newest end. */
  byCreated: SortedIndex;
  /** The same per agent. */
  byAgent: Map<string, SortedIndex>;
  /** The same per metadata pair (domain/metadata-pairs.ts): a top-level key with a scalar value. */
  byMetadata: Map<string, SortedIndex>;
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
export class MemoryTables {
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
        byMetadata: new Map(),
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
    // UTF-8 bytes, as the Redis adapter counts them: a string's length would let two- and
    // three-byte characters take up to three times the cap.
    for (const [key, value] of Object.entries(changes)) {
      if (Object.hasOwn(base, key)) bytes -= Buffer.byteLength(JSON.stringify(base[key]));
      else {
        bytes += Buffer.byteLength(JSON.stringify(key)) + 2;
        keys += 1;
      }
      bytes += Buffer.byteLength(JSON.stringify(value));
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
      // Frozen and shared: the values a patch did not change are the previous state's (frozen
      // already), so a step copies its patch, not the whole state, and reads copy nothing.
      state: frozen({ ...base, ...clone(changes) }),
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
    this.indexMetadata(tenant, session, {}, session.metadata);
    return record;
  }

  /** Moves the session between metadata index entries: from those of metadata `before` to those of `after`. */
  indexMetadata(tenant: string, session: Pick<Session, 'id' | 'created_at'>, before: JsonObject, after: JsonObject): void {
    const { byMetadata } = this.data(tenant);
    const { created_at: createdAt, id } = session;
    for (const pair of metadataPairs(before)) {
      const index = byMetadata.get(pair);
      index?.delete(createdAt, id);
      if (index?.size === 0) byMetadata.delete(pair);
    }
    for (const pair of metadataPairs(after)) {
      let index = byMetadata.get(pair);
      if (!index) byMetadata.set(pair, (index = new SortedIndex()));
      index.add(createdAt, id);
    }
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
    this.indexMetadata(tenant, session, session.metadata, {});
    data.sessions.delete(session.id);
  }
}

/** The record of a session with nothing in it yet. */
export function newRecord(session: Session, nowMs: number): SessionRecord {
  return { session, createdMs: nowMs, touchedMs: nowMs, checkpoints: [], stateBytes: 0, spans: [], runIds: [], approvalIds: new Set(), behind: [] };
}

/** A timer's key in {@link MemoryTables.timers}. */
export function timerKey(kind: DueTimer['kind'], tenant: string, id: string): string {
  return `${kind} ${tenant} ${id}`;
}

/**
 * A deep copy: values go into the memory Store copied, and come out copied or frozen (a
 * checkpoint's state, a session's metadata), so no caller holds stored state it could change.
 */
export function clone<T>(value: T): T {
  return copyJson(value) as T;
}

/**
 * A deep copy of JSON (plain objects, arrays, primitives) without structuredClone's
 * serialization, several times faster on the small objects a run writes; anything else (a
 * Date, a Map, a class instance, a cycle guard past 64 levels) goes to structuredClone.
 */
function copyJson(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth > 64) return structuredClone(value);
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i += 1) out[i] = copyJson(value[i], depth + 1);
    return out;
  }
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return structuredClone(value);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const copy = copyJson((value as Record<string, unknown>)[key], depth + 1);
    // An own `__proto__` key (JSON.parse makes one) stays a key, as structuredClone keeps it.
    if (key === '__proto__') Object.defineProperty(out, key, { value: copy, enumerable: true, writable: true, configurable: true });
    else out[key] = copy;
  }
  return out;
}

/** The JSON text of frozen values, made once per value (they never change). */
const texts = new WeakMap<object, string>();

/** `JSON.stringify(value)` of a value {@link frozen} froze, made once and kept while the value lives. */
export function frozenJson(value: object): string {
  let text = texts.get(value);
  if (text === undefined) texts.set(value, (text = JSON.stringify(value)));
  return text;
}

/** JSON frozen all the way down: stored once, handed out without copying (no caller can change it). */
export function frozen<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) frozen(child);
    Object.freeze(value);
  }
  return value;
}

/**
 * A session as the memory Store hands it out: a shallow copy (the store updates its own
 * fields in place), sharing the metadata, which is frozen when stored and only ever replaced.
 * A deep copy of every listed session cost half the embedded session list's throughput.
 */
export function sessionCopy(session: Session): Session {
  return { ...session };
}

function withoutUndefined(patch: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
}
