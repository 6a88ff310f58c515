import type {
  GraphCheckpointEntry,
  GraphCheckpointPage,
  GraphCheckpointPut,
  GraphCheckpointQuery,
  GraphCheckpointRecord,
  GraphCheckpointRef,
  GraphCheckpointStore,
  GraphWrite,
} from '../../ports/graph-storage.js';
import { graphStateTooLarge, graphThreadGone } from '../shared/graph-limits.js';
import { blobField, checkpointMember, childRange, splitCheckpointMember } from '../shared/graph-members.js';

/** One thread's LangGraph data. */
interface Thread {
  /** By checkpoint member (`ns NUL id`). */
  checkpoints: Map<string, GraphCheckpointRecord>;
  /** Channel values by blob field, with how many stored checkpoints hold each. */
  blobs: Map<string, string>;
  /** Each blob's size in UTF-8 bytes (the state cap sums them). */
  sizes: Map<string, number>;
  refs: Map<string, number>;
  /** By checkpoint member, then `taskId NUL idx`. */
  writes: Map<string, Map<string, GraphWrite>>;
  /** The store's write count at this thread's last write ({@link GraphCheckpointStore.version}). */
  version: number;
}

const newest = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0);

export interface MemoryGraphCheckpointOptions {
  /** Whether the session of a thread exists (the memory Store's), for puts that require it. */
  sessionExists?: (tenant: string, threadId: string) => boolean;
}

/** A subgraph checkpoint's place in its thread's age order: `id NUL ns` (checkpoint ids sort by time). */
const byAge = (member: string): string => {
  const { ns, checkpointId } = splitCheckpointMember(member);
  return `${checkpointId}\u0000${ns}`;
};

/**
 * LangGraph checkpoints in memory (the embedded mode), with the Redis adapter's rules: blobs
 * shared between checkpoints and counted, the newest `retain` checkpoints per namespace and
 * across the subgraph namespaces, the whole state under the cap, nothing for a thread whose
 * session is gone.
 */
export class MemoryGraphCheckpointStore implements GraphCheckpointStore {
  private readonly tenants = new Map<string, Map<string, Thread>>();
  /** Writes to any thread so far: a thread's version is this count at its last write, so never repeats. */
  private writeCount = 0;

  constructor(private readonly options: MemoryGraphCheckpointOptions = {}) {}

  /** Refuses a write for a thread whose session is gone, when the write requires one. */
  private checkSession(tenant: string, threadId: string, required: boolean | undefined): void {
    if (required && this.options.sessionExists && !this.options.sessionExists(tenant, threadId)) throw graphThreadGone(threadId);
  }

  private thread(tenant: string, threadId: string): Thread | undefined {
    return this.tenants.get(tenant)?.get(threadId);
  }

  private threadOrNew(tenant: string, threadId: string): Thread {
    let threads = this.tenants.get(tenant);
    if (!threads) this.tenants.set(tenant, (threads = new Map()));
    let thread = threads.get(threadId);
    if (!thread) threads.set(threadId, (thread = { checkpoints: new Map(), blobs: new Map(), sizes: new Map(), refs: new Map(), writes: new Map(), version: 0 }));
    return thread;
  }

  /** The thread was written: its version moves on. */
  private touch(thread: Thread): void {
    thread.version = ++this.writeCount;
  }

  async version(tenant: string, threadId: string): Promise<string> {
    const thread = this.thread(tenant, threadId);
    return thread ? String(thread.version) : '';
  }

  async putCheckpoint(tenant: string, threadId: string, put: GraphCheckpointPut): Promise<void> {
    this.checkSession(tenant, threadId, put.requireSession);
    for (const batch of put.writes ?? []) this.storeWrites(tenant, threadId, put.ns, batch.checkpointId, batch.writes);
    // The whole state: the record, the new values, and the stored values of the versions it keeps.
    const stored = this.thread(tenant, threadId);
    let bytes = Buffer.byteLength(put.record.checkpoint) + Buffer.byteLength(put.record.metadata);
    for (const [channel, version] of Object.entries(put.record.versions)) {
      const blob = put.blobs[channel];
      bytes += blob !== undefined ? Buffer.byteLength(blob) : (stored?.sizes.get(blobField(put.ns, channel, version)) ?? 0);
    }
    if (bytes > put.maxStateBytes) throw graphStateTooLarge(bytes, put.maxStateBytes);
    const thread = stored ?? this.threadOrNew(tenant, threadId);
    this.touch(thread);
    const member = checkpointMember(put.ns, put.record.checkpointId);
    const replaced = thread.checkpoints.get(member);
    // Count the new holder before releasing the old one, so a blob both hold stays.
    for (const [channel, version] of Object.entries(put.record.versions)) {
      const field = blobField(put.ns, channel, version);
      thread.refs.set(field, (thread.refs.get(field) ?? 0) + 1);
      const blob = put.blobs[channel];
      if (blob !== undefined) {
        thread.blobs.set(field, blob);
        thread.sizes.set(field, Buffer.byteLength(blob));
      }
    }
    if (replaced) this.release(thread, put.ns, replaced);
    thread.checkpoints.set(member, put.record);
    const { min, max } = childRange(put.ns);
    const inNamespace = [...thread.checkpoints.keys()].filter((m) => m >= min && m < max).sort();
    const excess = Math.max(0, inNamespace.length - put.retain);
    if (excess > 0) {
      for (const old of inNamespace.slice(0, excess)) this.drop(thread, old, false);
      // Writes of every checkpoint older than the oldest kept go, stored before or after their checkpoint.
      const oldest = inNamespace[excess]!;
      for (const member of thread.writes.keys()) if (member >= min && member < oldest) thread.writes.delete(member);
    }
    if (put.ns !== '') this.pruneSubgraphs(thread, put.retain);
  }

  /** Keeps the newest `retain` checkpoints across the thread's subgraph namespaces (each subgraph task has its own). */
  private pruneSubgraphs(thread: Thread, retain: number): void {
    const subgraphs = [...thread.checkpoints.keys()].filter((m) => !m.startsWith('\u0000')).sort((a, b) => (byAge(a) < byAge(b) ? -1 : 1));
    for (const old of subgraphs.slice(0, Math.max(0, subgraphs.length - retain))) this.drop(thread, old, true);
  }

  /** Removes a stored checkpoint (its hold on its blobs), and its writes when `withWrites`. */
  private drop(thread: Thread, member: string, withWrites: boolean): void {
    const record = thread.checkpoints.get(member);
    if (!record) return;
    this.release(thread, splitCheckpointMember(member).ns, record);
    thread.checkpoints.delete(member);
    if (withWrites) thread.writes.delete(member);
  }

  /** Drops a checkpoint's hold on its blobs; a blob no checkpoint holds goes. */
  private release(thread: Thread, ns: string, record: GraphCheckpointRecord): void {
    for (const [channel, version] of Object.entries(record.versions)) {
      const field = blobField(ns, channel, version);
      const left = (thread.refs.get(field) ?? 0) - 1;
      if (left > 0) {
        thread.refs.set(field, left);
      } else {
        thread.refs.delete(field);
        thread.blobs.delete(field);
        thread.sizes.delete(field);
      }
    }
  }

  async putWrites(tenant: string, threadId: string, ns: string, checkpointId: string, writes: GraphWrite[], options: { requireSession?: boolean } = {}): Promise<void> {
    this.checkSession(tenant, threadId, options.requireSession);
    this.storeWrites(tenant, threadId, ns, checkpointId, writes);
  }

  private storeWrites(tenant: string, threadId: string, ns: string, checkpointId: string, writes: GraphWrite[]): void {
    const thread = this.threadOrNew(tenant, threadId);
    this.touch(thread);
    const member = checkpointMember(ns, checkpointId);
    let stored = thread.writes.get(member);
    if (!stored) thread.writes.set(member, (stored = new Map()));
    for (const write of writes) {
      const key = `${write.taskId}\u0000${write.idx}`;
      if (write.idx >= 0 && stored.has(key)) continue;
      stored.set(key, write);
    }
  }

  async getCheckpoint(tenant: string, threadId: string, ns: string, checkpointId?: string): Promise<GraphCheckpointEntry | null> {
    const thread = this.thread(tenant, threadId);
    if (!thread) return null;
    let member = checkpointId === undefined ? undefined : checkpointMember(ns, checkpointId);
    if (member === undefined) {
      const { min, max } = childRange(ns);
      member = [...thread.checkpoints.keys()].filter((m) => m >= min && m < max).sort(newest)[0];
    }
    return member === undefined ? null : this.entry(threadId, thread, member);
  }

  private entry(threadId: string, thread: Thread, member: string): GraphCheckpointEntry | null {
    const record = thread.checkpoints.get(member);
    if (!record) return null;
    const { ns } = splitCheckpointMember(member);
    const values: Record<string, string> = {};
    for (const [channel, version] of Object.entries(record.versions)) {
      const blob = thread.blobs.get(blobField(ns, channel, version));
      if (blob !== undefined) values[channel] = blob;
    }
    return { threadId, ns, record, values, writes: [...(thread.writes.get(member)?.values() ?? [])], version: String(thread.version) };
  }

  async listCheckpoints(tenant: string, threadId: string, query: GraphCheckpointQuery): Promise<GraphCheckpointPage> {
    const thread = this.thread(tenant, threadId);
    if (!thread) return { entries: [] };
    const range = query.ns === undefined ? undefined : childRange(query.ns);
    const members = [...thread.checkpoints.keys()]
      .filter((m) => !range || (m >= range.min && m < range.max))
      .filter((m) => query.cursor === undefined || m < query.cursor)
      .filter((m) => query.before === undefined || splitCheckpointMember(m).checkpointId < query.before)
      .sort(newest);
    const page = members.slice(0, query.limit);
    const entries = page.map((m) => this.entry(threadId, thread, m)!);
    return members.length > query.limit ? { entries, next: page.at(-1)! } : { entries };
  }

  async listThreads(tenant: string, after: string | undefined, limit: number): Promise<string[]> {
    const ids = [...(this.tenants.get(tenant)?.keys() ?? [])].sort();
    return ids.filter((id) => after === undefined || id > after).slice(0, limit);
  }

  async deleteCheckpoints(tenant: string, threadId: string, checkpoints: readonly GraphCheckpointRef[]): Promise<void> {
    const thread = this.thread(tenant, threadId);
    if (!thread) return;
    this.touch(thread);
    for (const { ns, checkpointId } of checkpoints) {
      const member = checkpointMember(ns, checkpointId);
      this.drop(thread, member, true);
      thread.writes.delete(member);
    }
  }

  async deleteThread(tenant: string, threadId: string): Promise<void> {
    this.removeThread(tenant, threadId);
  }

  /**
   * {@link deleteThread} at once: the memory store calls it within a session's removal, so
   * the session and its thread go in one step, as the Redis delete script does.
   */
  removeThread(tenant: string, threadId: string): void {
    const threads = this.tenants.get(tenant);
    threads?.delete(threadId);
    if (threads?.size === 0) this.tenants.delete(tenant);
  }
}
