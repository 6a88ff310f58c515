import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  INTERRUPT,
  TASKS,
  WRITES_IDX_MAP,
  compareWritesSortKeys,
  copyCheckpoint,
  getCheckpointId,
  maxChannelVersion,
  writesSortKey,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import type { GraphCheckpointEntry, GraphCheckpointRef, GraphCheckpointStore, GraphWrite } from '../ports/graph-storage.js';
import { AppError, badRequest } from '../domain/errors.js';
import { DEFAULT_STORAGE_LIMITS } from '../domain/types.js';
import { PendingWrites } from './pending-writes.js';
import { deserialize, serialize, storageId } from './serialized.js';

export interface AgentplaneCheckpointSaverOptions {
  /** The tenant every read and write is scoped to. */
  tenant: string;
  /** The backend's LangGraph checkpoint storage (memory or Redis adapter). */
  storage: GraphCheckpointStore;
  /**
   * Checkpoints kept per thread and namespace, newest first (SERVICE_CHECKPOINTS_RETAIN); more
   * while the newest still needs older ones to rebuild a delta channel.
   * @defaultValue DEFAULT_STORAGE_LIMITS.checkpointsRetain
   */
  retain?: number;
  /**
   * Largest serialized checkpoint a put stores, its metadata and every channel value it holds
   * included, and largest set of a task's writes (SERVICE_MAX_STATE_BYTES); a larger one fails
   * with `payload_too_large` and nothing is stored.
   * @defaultValue DEFAULT_STORAGE_LIMITS.maxStateBytes
   */
  maxCheckpointBytes?: number;
  /**
   * Refuse (`conflict`) every write for a thread whose agentplane session is gone (deleted,
   * expired, lost with Redis's data): a run writing for it stops. @defaultValue false
   */
  requireSession?: boolean;
  /**
   * Store a run's `configurable` and `config.metadata` in the metadata of the checkpoints it
   * writes, as LangGraph's server does (`getHistory({ metadata })` then finds a run's
   * checkpoints); off, the metadata is stored as LangGraph gives it (the saver's own contract).
   * @defaultValue false
   */
  runMetadata?: boolean;
  /** @defaultValue LangGraph's JsonPlusSerializer */
  serde?: SerializerProtocol;
}

/** Threads and checkpoints read per storage call while listing. */
const LIST_PAGE = 100;

const missing = (what: string, field: string) =>
  badRequest(`Failed to ${what}: the config has no "${field}" in its "configurable" property (the thread is the agentplane session).`);

/**
 * LangGraph's `BaseCheckpointSaver` on agentplane's storage, for one tenant: a thread is a
 * session. Checkpoints keep their channel values as blobs per channel version, so a put stores
 * only the channels that changed (`newVersions`) and a read rebuilds the rest from the blobs
 * of earlier versions. Retention keeps the newest checkpoints per namespace (see
 * {@link AgentplaneCheckpointSaverOptions.retain}).
 */
export class AgentplaneCheckpointSaver extends BaseCheckpointSaver {
  readonly tenant: string;
  private readonly storage: GraphCheckpointStore;
  private readonly retain: number;
  private readonly maxCheckpointBytes: number;
  private readonly requireSession: boolean;
  private readonly runMetadata: boolean;
  /** Task writes waiting to go with their step's checkpoint (one storage call for both). */
  private readonly waiting: PendingWrites;

  constructor(options: AgentplaneCheckpointSaverOptions) {
    super(options.serde);
    this.tenant = options.tenant;
    this.storage = options.storage;
    this.retain = options.retain ?? DEFAULT_STORAGE_LIMITS.checkpointsRetain;
    this.maxCheckpointBytes = options.maxCheckpointBytes ?? DEFAULT_STORAGE_LIMITS.maxStateBytes;
    this.requireSession = options.requireSession ?? false;
    this.runMetadata = options.runMetadata ?? false;
    if (!Number.isInteger(this.retain) || this.retain < 1) throw new TypeError('retain must be an integer of at least 1.');
    this.waiting = new PendingWrites((threadId, ns, checkpointId, writes) =>
      this.storage.putWrites(this.tenant, threadId, ns, checkpointId, writes, { requireSession: this.requireSession }),
    );
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const entry = await this.entryFor(config);
    return entry ? this.toTuple(entry) : undefined;
  }

  /** The thread's version in storage ({@link GraphCheckpointStore.version}): "" for a thread with nothing stored. */
  async versionOf(threadId: string): Promise<string> {
    const thread = storageId('thread_id', threadId);
    await this.waiting.flushThread(thread);
    return this.storage.version(this.tenant, thread);
  }

  /** The stored checkpoint {@link getTuple} reads for `config`, as stored (nothing deserialized); null for none. */
  async entryFor(config: RunnableConfig): Promise<GraphCheckpointEntry | null> {
    const threadId: unknown = config.configurable?.thread_id;
    if (threadId === undefined) return null;
    const ns = storageId('checkpoint_ns', config.configurable?.checkpoint_ns ?? '', true);
    const checkpointId = getCheckpointId(config);
    const thread = storageId('thread_id', threadId);
    await this.waiting.flushThread(thread);
    return this.storage.getCheckpoint(this.tenant, thread, ns, checkpointId ? storageId('checkpoint_id', checkpointId) : undefined);
  }

  /**
   * This saver, except that the read of `config` answers `entry`, read already (by
   * {@link entryFor}; null: nothing stored) the first time: a caller that looked at the stored
   * checkpoint first does not read it twice.
   */
  primedWith(config: RunnableConfig, entry: GraphCheckpointEntry | null): AgentplaneCheckpointSaver {
    const primed = Object.create(this) as AgentplaneCheckpointSaver;
    const same = (asked: RunnableConfig) =>
      asked.configurable?.thread_id === config.configurable?.thread_id &&
      (asked.configurable?.checkpoint_ns ?? '') === (config.configurable?.checkpoint_ns ?? '') &&
      getCheckpointId(asked) === getCheckpointId(config);
    // Once: a later read of the same config (a getState after a run) reads what is stored then.
    let answered = false;
    primed.getTuple = (asked: RunnableConfig) => {
      if (answered || !same(asked)) return this.getTuple(asked);
      answered = true;
      return entry ? this.toTuple(entry) : Promise.resolve(undefined);
    };
    return primed;
  }

  /** The metadata of a stored checkpoint (as {@link entryFor} reads it), nothing else deserialized. */
  async metadataOf(entry: GraphCheckpointEntry): Promise<CheckpointMetadata> {
    return (await deserialize(this.serde, entry.record.metadata)) as CheckpointMetadata;
  }

  /** The interrupts a stored checkpoint's tasks raised (its pending `__interrupt__` writes), in the order they apply. */
  async interruptsOf(entry: GraphCheckpointEntry): Promise<{ id?: unknown; value?: unknown }[]> {
    const writes = await this.pendingWrites(entry.writes.filter((write) => write.channel === INTERRUPT));
    return writes.flatMap(([, , value]) => (Array.isArray(value) ? value : [value])) as { id?: unknown; value?: unknown }[];
  }


  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { filter, before } = options;
    let left = options.limit ?? Number.POSITIVE_INFINITY;
    const ns = config.configurable?.checkpoint_ns === undefined ? undefined : storageId('checkpoint_ns', config.configurable.checkpoint_ns, true);
    const onlyId: unknown = config.configurable?.checkpoint_id;
    const beforeId: unknown = before?.configurable?.checkpoint_id;
    for await (const threadId of this.threads(config.configurable?.thread_id)) {
      await this.waiting.flushThread(threadId);
      let cursor: string | undefined;
      do {
        const page = await this.storage.listCheckpoints(this.tenant, threadId, {
          ns,
          before: beforeId ? storageId('checkpoint_id', beforeId) : undefined,
          cursor,
          // Without a filter every checkpoint read is yielded: read no more than are wanted.
          limit: filter ? LIST_PAGE : Math.min(LIST_PAGE, left),
        });
        for (const entry of page.entries) {
          if (left <= 0) return;
          if (onlyId && entry.record.checkpointId !== onlyId) continue;
          const metadata = (await deserialize(this.serde, entry.record.metadata)) as Record<string, unknown>;
          if (filter && !Object.entries(filter).every(([key, value]) => metadata[key] === value)) continue;
          left -= 1;
          yield this.toTuple(entry);
        }
        cursor = page.next;
      } while (cursor !== undefined && left > 0);
    }
  }

  /** The thread of the config, or every thread of the tenant. */
  private async *threads(threadId: unknown): AsyncGenerator<string> {
    if (threadId !== undefined) {
      yield storageId('thread_id', threadId);
      return;
    }
    let after: string | undefined;
    for (;;) {
      const page = await this.storage.listThreads(this.tenant, after, LIST_PAGE);
      yield* page;
      if (page.length < LIST_PAGE) return;
      after = page.at(-1);
    }
  }

  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    if (config.configurable?.thread_id === undefined) throw missing('put a checkpoint', 'thread_id');
    const threadId = storageId('thread_id', config.configurable.thread_id);
    const ns = storageId('checkpoint_ns', config.configurable.checkpoint_ns ?? '', true);
    const checkpointId = storageId('checkpoint_id', checkpoint.id);
    const parentId: unknown = config.configurable.checkpoint_id;
    const { channel_values: values, ...rest } = copyCheckpoint(checkpoint);
    const versions = Object.fromEntries(Object.entries(checkpoint.channel_versions).map(([channel, version]) => [channel, String(version)]));
    const blobs: Record<string, string> = {};
    for (const channel of Object.keys(newVersions)) {
      if (channel in versions && Object.hasOwn(values, channel)) blobs[channel] = await serialize(this.serde, values[channel]);
    }
    const record = {
      checkpointId,
      ...(parentId ? { parentId: storageId('checkpoint_id', parentId) } : {}),
      checkpoint: await serialize(this.serde, rest),
      metadata: await serialize(this.serde, this.runMetadata ? checkpointMetadataOf(metadata, config) : withRunId(metadata, config)),
      versions,
    };
    // The step's task writes waiting go with it; the storage refuses a checkpoint whose whole
    // state passes the cap (it knows the stored values' sizes), the writes then stored still.
    const taken = this.waiting.take(threadId, ns);
    const writes = taken ? await taken.ready() : [];
    try {
      await this.storage.putCheckpoint(this.tenant, threadId, {
        ns,
        record,
        blobs,
        retain: Math.max(this.retain, deltaDepth(metadata) + 1),
        maxStateBytes: this.maxCheckpointBytes,
        requireSession: this.requireSession,
        ...(writes.length > 0 ? { writes } : {}),
      });
      taken?.settle();
    } catch (error) {
      taken?.settle(error instanceof AppError && error.code === 'payload_too_large' ? undefined : error);
      throw error;
    }
    return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpointId } };
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ''): Promise<void> {
    if (config.configurable?.thread_id === undefined) throw missing('put writes', 'thread_id');
    if (config.configurable.checkpoint_id === undefined) throw missing('put writes', 'checkpoint_id');
    // Stored with the step's checkpoint when it follows (the next turn of the event loop at the
    // latest); a read given after this call sees them.
    await this.waiting.add(
      storageId('thread_id', config.configurable.thread_id),
      storageId('checkpoint_ns', config.configurable.checkpoint_ns ?? '', true),
      storageId('checkpoint_id', config.configurable.checkpoint_id),
      this.serializedWrites(writes, storageId('task_id', taskId), taskPath),
    );
  }

  /** A task's writes as stored; refused past the size cap. */
  private async serializedWrites(writes: PendingWrite[], taskId: string, taskPath: string): Promise<GraphWrite[]> {
    const stored: GraphWrite[] = await Promise.all(
      writes.map(async ([channel, value], i) => ({ taskId, idx: WRITES_IDX_MAP[channel] ?? i, channel, value: await serialize(this.serde, value), taskPath })),
    );
    const bytes = stored.reduce((sum, write) => sum + Buffer.byteLength(write.value), 0);
    if (bytes > this.maxCheckpointBytes) {
      throw new AppError('payload_too_large', `The task's writes take ${bytes} bytes, more than the limit of ${this.maxCheckpointBytes} (SERVICE_MAX_STATE_BYTES).`);
    }
    return stored;
  }

  async deleteThread(threadId: string): Promise<void> {
    const thread = storageId('thread_id', threadId);
    await this.waiting.flushThread(thread);
    await this.storage.deleteThread(this.tenant, thread);
  }

  /**
   * Removes every checkpoint of `threadId` that run `runId` wrote (metadata `run_id`, each
   * namespace) with its writes: the thread goes back to where it was before the run (a
   * rollback). Resolves with how many went.
   */
  async deleteRunCheckpoints(threadId: string, runId: string): Promise<number> {
    const thread = storageId('thread_id', threadId);
    const refs: GraphCheckpointRef[] = [];
    for (const entry of await this.entriesOf(thread)) {
      const metadata = (await deserialize(this.serde, entry.record.metadata)) as Record<string, unknown>;
      if (metadata.run_id === runId) refs.push({ ns: entry.ns, checkpointId: entry.record.checkpointId });
    }
    await this.storage.deleteCheckpoints(this.tenant, thread, refs);
    return refs.length;
  }

  /** Every stored checkpoint of a thread, newest first. */
  private async entriesOf(threadId: string): Promise<GraphCheckpointEntry[]> {
    await this.waiting.flushThread(threadId);
    const entries: GraphCheckpointEntry[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.storage.listCheckpoints(this.tenant, threadId, { cursor, limit: LIST_PAGE });
      entries.push(...page.entries);
      cursor = page.next;
    } while (cursor !== undefined);
    return entries;
  }

  /**
   * Copies every checkpoint of `threadId` (each namespace, its channel values and pending
   * writes, as stored) to `toThreadId`, as LangGraph's server copies a thread: a metadata
   * `thread_id` naming the source names the copy. The copy keeps every checkpoint the source
   * held; later puts prune it as any thread. `toThreadId` should hold no checkpoints yet.
   */
  async copyThread(threadId: string, toThreadId: string): Promise<void> {
    const from = storageId('thread_id', threadId);
    const to = storageId('thread_id', toThreadId);
    const entries = await this.entriesOf(from);
    for (const entry of entries.reverse()) {
      const metadata = (await deserialize(this.serde, entry.record.metadata)) as Record<string, unknown>;
      const record = metadata.thread_id === from ? { ...entry.record, metadata: await serialize(this.serde, { ...metadata, thread_id: to }) } : entry.record;
      await this.storage.putCheckpoint(this.tenant, to, {
        ns: entry.ns,
        record,
        blobs: entry.values,
        retain: Math.max(this.retain, entries.length),
        maxStateBytes: this.maxCheckpointBytes,
        requireSession: this.requireSession,
      });
      if (entry.writes.length > 0) await this.storage.putWrites(this.tenant, to, entry.ns, record.checkpointId, entry.writes, { requireSession: this.requireSession });
    }
  }

  private async toTuple(entry: GraphCheckpointEntry): Promise<CheckpointTuple> {
    const { threadId, ns, record } = entry;
    const checkpoint = (await deserialize(this.serde, record.checkpoint)) as Checkpoint;
    checkpoint.channel_values = {};
    for (const [channel, value] of Object.entries(entry.values)) checkpoint.channel_values[channel] = await deserialize(this.serde, value);
    if (checkpoint.v < 4 && record.parentId !== undefined) await this.migratePendingSends(checkpoint, threadId, ns, record.parentId);
    const tuple: CheckpointTuple = {
      config: { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: record.checkpointId } },
      checkpoint,
      metadata: (await deserialize(this.serde, record.metadata)) as CheckpointMetadata,
      pendingWrites: await this.pendingWrites(entry.writes),
    };
    if (record.parentId !== undefined) {
      tuple.parentConfig = { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: record.parentId } };
    }
    return tuple;
  }

  /** Writes in the order live execution applies them (`writesSortKey`), deserialized. */
  private async pendingWrites(writes: GraphWrite[]): Promise<CheckpointPendingWrite[]> {
    const sorted = [...writes].sort((a, b) => compareWritesSortKeys(writesSortKey(a.taskPath, a.taskId, a.idx), writesSortKey(b.taskPath, b.taskId, b.idx)));
    return Promise.all(sorted.map(async (w): Promise<CheckpointPendingWrite> => [w.taskId, w.channel, await deserialize(this.serde, w.value)]));
  }

  /**
   * Checkpoints before format 4 kept pending sends as writes to TASKS on their parent; they
   * become the TASKS channel, as LangGraph's own savers migrate them.
   */
  private async migratePendingSends(checkpoint: Checkpoint, threadId: string, ns: string, parentId: string): Promise<void> {
    const parent = await this.storage.getCheckpoint(this.tenant, threadId, ns, parentId);
    const sends = await this.pendingWrites((parent?.writes ?? []).filter((w) => w.channel === TASKS));
    checkpoint.channel_values[TASKS] = sends.map(([, , value]) => value);
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }
}

/**
 * How many ancestors the checkpoint needs to rebuild its delta channels: the most supersteps
 * since a delta channel's last snapshot (`counters_since_delta_snapshot`), 0 without any.
 */
function deltaDepth(metadata: CheckpointMetadata): number {
  const counters = (metadata as { counters_since_delta_snapshot?: Record<string, [number, number]> }).counters_since_delta_snapshot ?? {};
  return Object.values(counters).reduce((deepest, [, supersteps]) => Math.max(deepest, Number(supersteps) || 0), 0);
}

/**
 * The metadata with the run that wrote the checkpoint (`configurable.run_id`, as LangGraph's
 * server records it): a worker taking over a run finds how far that run got.
 */
/** Keys of `configurable` a checkpoint's metadata does not take (they name the checkpoint itself), as LangGraph's server. */
const NOT_METADATA = new Set(['checkpoint_ns', 'checkpoint_id', 'run_id', 'thread_id']);

/**
 * A checkpoint's metadata as LangGraph's server stores it: the run's `configurable` (but the
 * checkpoint's own names and `__` internals), the run's metadata (`config.metadata`: what the
 * client gave the run), then LangGraph's own; and the run id, so a run finds its checkpoints
 * (a taken-over job, a rollback). `getHistory({ metadata })` finds a run's checkpoints by it.
 */
function checkpointMetadataOf(metadata: CheckpointMetadata, config: RunnableConfig): CheckpointMetadata {
  const configurable = Object.entries(config.configurable ?? {}).filter(([key]) => !key.startsWith('__') && !NOT_METADATA.has(key));
  return withRunId({ ...Object.fromEntries(configurable), ...config.metadata, ...metadata } as CheckpointMetadata, config);
}

function withRunId(metadata: CheckpointMetadata, config: RunnableConfig): CheckpointMetadata {
  const runId: unknown = config.configurable?.run_id;
  if (typeof runId !== 'string' || 'run_id' in metadata) return metadata;
  return { ...metadata, run_id: runId } as CheckpointMetadata;
}
