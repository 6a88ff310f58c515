/**
 * Storage of LangGraph.js graphs on agentplane's backends: checkpoints with their channel
 * values and pending writes (what a `BaseCheckpointSaver` keeps), and cross-thread memory
 * items (what a `BaseStore` keeps). The records are plain strings serialized by the classes in
 * `src/langgraph/`, so the adapters never import LangGraph (an optional peer dependency).
 * A thread is an agentplane session: `threadId` is the session id. Every method takes the
 * tenant first; another tenant's data is indistinguishable from missing data.
 */

/** One checkpoint as stored: serialized by the saver, opaque to storage. */
export interface GraphCheckpointRecord {
  checkpointId: string;
  /** The checkpoint this one follows in its namespace, when any. */
  parentId?: string;
  /** The serialized checkpoint without its channel values (they are blobs). */
  checkpoint: string;
  /** The serialized metadata. */
  metadata: string;
  /**
   * The version of every channel the checkpoint holds (`String(version)`): the blobs its
   * channel values are read from.
   */
  versions: Record<string, string>;
}

/** One pending write of a task against a checkpoint. */
export interface GraphWrite {
  taskId: string;
  /** The write's index within its task; negative for LangGraph's special channels (errors, interrupts). */
  idx: number;
  channel: string;
  /** The serialized value. */
  value: string;
  /** The task's path (the order writes are applied in); "" when unknown. */
  taskPath: string;
}

/** What one `put` stores. */
export interface GraphCheckpointPut {
  /** The checkpoint namespace ("" for the root graph). */
  ns: string;
  record: GraphCheckpointRecord;
  /**
   * Serialized values of the channels whose version is new in this checkpoint, by channel:
   * stored under `record.versions[channel]` and shared by every later checkpoint that holds
   * the same version.
   */
  blobs: Record<string, string>;
  /**
   * Checkpoints of this thread and namespace kept, newest (by checkpoint id) first, this one
   * included; older ones go with their writes and the blobs no kept checkpoint holds. The
   * subgraph namespaces of a thread (every namespace but the root "") also share one bound of
   * `retain` checkpoints: each subgraph task has its namespace, so a per-namespace bound alone
   * would let a thread grow with every run.
   */
  retain: number;
  /**
   * The largest checkpoint in bytes: its record and every channel value it holds, stored before
   * or new in this put. A larger one is refused (`payload_too_large`) and nothing is written.
   */
  maxStateBytes: number;
  /**
   * Refuse the put (`conflict`, nothing written) when the thread's session no longer exists: a
   * run writing for a session deleted under it, or lost with the backend's data.
   * @defaultValue false (a thread needs no session: the saver used on its own)
   */
  requireSession?: boolean;
  /**
   * Pending writes stored by the same call, before the checkpoint: as {@link
   * GraphCheckpointStore.putWrites} of each, then the put (LangGraph sends a step's task writes
   * and then its checkpoint; one call stores both). Refused with the put when the session is
   * required and gone; kept when the checkpoint is refused for its size.
   */
  writes?: { checkpointId: string; writes: GraphWrite[] }[];
}

/** A stored checkpoint with what reading it needs. */
export interface GraphCheckpointEntry {
  threadId: string;
  ns: string;
  record: GraphCheckpointRecord;
  /** Serialized channel values by channel (the channels whose version has a blob). */
  values: Record<string, string>;
  /** Pending writes, in no particular order (the saver sorts them). */
  writes: GraphWrite[];
  /** The thread's {@link GraphCheckpointStore.version} when this entry was read (in the same step). */
  version: string;
}

/** A page of checkpoints of one thread, newest first. */
export interface GraphCheckpointPage {
  entries: GraphCheckpointEntry[];
  /** Pass as `cursor` to read the next page; absent after the last. */
  next?: string;
}

/** Which checkpoints of a thread to list. */
export interface GraphCheckpointQuery {
  /** Only this namespace. @defaultValue every namespace */
  ns?: string;
  /** Only checkpoints whose id sorts before this one. */
  before?: string;
  /** Where the previous page ended ({@link GraphCheckpointPage.next}). */
  cursor?: string;
  /** Page size. */
  limit: number;
}

/** One checkpoint of a thread, by namespace and id. */
export interface GraphCheckpointRef {
  ns: string;
  checkpointId: string;
}

/** LangGraph checkpoints: bounded per thread and namespace, gone with their thread. */
export interface GraphCheckpointStore {
  /**
   * Stores a checkpoint, its new blobs, and prunes the thread's namespace to `retain`
   * checkpoints. Replacing a checkpoint of the same id keeps its writes.
   */
  putCheckpoint(tenant: string, threadId: string, put: GraphCheckpointPut): Promise<void>;
  /**
   * Stores pending writes against a checkpoint. A write whose `(taskId, idx)` is already
   * stored is kept as it was, unless `idx` is negative (it replaces). The checkpoint need not
   * be stored yet (LangGraph sends a checkpoint and its writes concurrently); the writes of
   * checkpoints older than the oldest one kept go when a put prunes the namespace. With
   * `requireSession`, refused (`conflict`) as {@link GraphCheckpointPut.requireSession} says.
   */
  putWrites(tenant: string, threadId: string, ns: string, checkpointId: string, writes: GraphWrite[], options?: { requireSession?: boolean }): Promise<void>;
  /**
   * A token of the thread's stored checkpoints and writes: it changes with every put, write and
   * delete of the thread, in any namespace, and never comes back (a thread deleted and written
   * again gets tokens it never had); "" for a thread with none. Equal tokens read at two times
   * mean nothing of the thread was written in between: a reader keeps what it made of a thread
   * under the token it read with it (the latest state answer).
   */
  version(tenant: string, threadId: string): Promise<string>;
  /** The checkpoint of that id, or the newest of the namespace without one; null when none. */
  getCheckpoint(tenant: string, threadId: string, ns: string, checkpointId?: string): Promise<GraphCheckpointEntry | null>;
  /** One page of a thread's checkpoints, newest first (by namespace, then id, descending). */
  listCheckpoints(tenant: string, threadId: string, query: GraphCheckpointQuery): Promise<GraphCheckpointPage>;
  /** The tenant's threads that have checkpoints, by id, after `after`, at most `limit`. */
  listThreads(tenant: string, after: string | undefined, limit: number): Promise<string[]>;
  /**
   * Removes the named checkpoints of the thread with their pending writes, and the blobs no
   * remaining checkpoint holds; checkpoints not stored are skipped (a run's rollback).
   */
  deleteCheckpoints(tenant: string, threadId: string, checkpoints: readonly GraphCheckpointRef[]): Promise<void>;
  /** Removes every checkpoint, write and blob of the thread, in every namespace. */
  deleteThread(tenant: string, threadId: string): Promise<void>;
}

/** One cross-thread memory item as stored. */
export interface GraphItem {
  namespace: string[];
  key: string;
  /** The value's JSON. */
  value: string;
  /** ms since the epoch. */
  createdAt: number;
  updatedAt: number;
}

/** A page of items; `next` reads the following one. */
export interface GraphItemPage {
  items: GraphItem[];
  next?: string;
}

/** A page of distinct namespaces. */
export interface GraphNamespacePage {
  namespaces: string[][];
  next?: string;
}

/**
 * Cross-thread memory: items by namespace and key, bounded in bytes per tenant. Namespace
 * labels are non-empty and contain no `.`, `:` or NUL (LangGraph's own rule).
 */
export interface GraphItemStore {
  /**
   * Creates or replaces the item. Throws AppError `payload_too_large` when the tenant's items
   * would pass the byte cap (nothing is written then).
   */
  putItem(tenant: string, namespace: string[], key: string, value: string): Promise<void>;
  getItem(tenant: string, namespace: string[], key: string): Promise<GraphItem | null>;
  /** Removes the item; nothing when absent. */
  deleteItem(tenant: string, namespace: string[], key: string): Promise<void>;
  /**
   * Items whose namespace starts with `prefix` (every item for `[]`), namespaces in order and
   * each one's items in the order they were put (as LangGraph's InMemoryStore): a replaced item
   * keeps its place, one deleted and put again goes last. One page from `cursor`.
   */
  scanItems(tenant: string, prefix: string[], cursor: string | undefined, limit: number): Promise<GraphItemPage>;
  /** Namespaces holding items and starting with `prefix`, in order, one page from `cursor`. */
  scanNamespaces(tenant: string, prefix: string[], cursor: string | undefined, limit: number): Promise<GraphNamespacePage>;
  /** Bytes the tenant's items take (keys, namespaces and values). */
  usedBytes(tenant: string): Promise<number>;
}
