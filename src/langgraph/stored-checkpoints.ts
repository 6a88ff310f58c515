import type { RunnableConfig } from '@langchain/core/runnables';
import {
  JsonPlusSerializer,
  TASKS,
  compareWritesSortKeys,
  getCheckpointId,
  maxChannelVersion,
  writesSortKey,
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import type { GraphCheckpointEntry, GraphCheckpointStore, GraphWrite } from '../ports/graph-storage.js';
import { DEFAULT_STORAGE_LIMITS } from '../domain/types.js';
import { PendingWrites } from './pending-writes.js';
import { deserialize, storageId } from './serialized.js';

export interface StoredCheckpointsOptions {
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
export const LIST_PAGE = 100;

/**
 * A tenant's LangGraph checkpoints on agentplane's storage, read into LangGraph's shapes: what
 * LangGraph's saver ({@link AgentplaneCheckpointSaver}) and the engine's own reads
 * ({@link ThreadCheckpoints}) share. Task writes the saver holds back to store with their step's
 * checkpoint ({@link waiting}) are stored before any read of their thread: every read sees them.
 */
export class StoredCheckpoints {
  readonly tenant: string;
  readonly storage: GraphCheckpointStore;
  readonly serde: SerializerProtocol;
  readonly retain: number;
  readonly maxCheckpointBytes: number;
  readonly requireSession: boolean;
  readonly runMetadata: boolean;
  /** Task writes waiting to go with their step's checkpoint (one storage call for both). */
  readonly waiting: PendingWrites;

  constructor(options: StoredCheckpointsOptions) {
    this.tenant = options.tenant;
    this.storage = options.storage;
    this.serde = options.serde ?? new JsonPlusSerializer();
    this.retain = options.retain ?? DEFAULT_STORAGE_LIMITS.checkpointsRetain;
    this.maxCheckpointBytes = options.maxCheckpointBytes ?? DEFAULT_STORAGE_LIMITS.maxStateBytes;
    this.requireSession = options.requireSession ?? false;
    this.runMetadata = options.runMetadata ?? false;
    if (!Number.isInteger(this.retain) || this.retain < 1) throw new TypeError('retain must be an integer of at least 1.');
    this.waiting = new PendingWrites((threadId, ns, checkpointId, writes) =>
      this.storage.putWrites(this.tenant, threadId, ns, checkpointId, writes, { requireSession: this.requireSession }),
    );
  }

  /** The stored checkpoint `config` names (its thread's latest without a `checkpoint_id`), as stored; null for none. */
  async entryFor(config: RunnableConfig): Promise<GraphCheckpointEntry | null> {
    const threadId: unknown = config.configurable?.thread_id;
    if (threadId === undefined) return null;
    const ns = storageId('checkpoint_ns', config.configurable?.checkpoint_ns ?? '', true);
    const checkpointId = getCheckpointId(config);
    const thread = storageId('thread_id', threadId);
    await this.waiting.flushThread(thread);
    return this.storage.getCheckpoint(this.tenant, thread, ns, checkpointId ? storageId('checkpoint_id', checkpointId) : undefined);
  }

  /** Every stored checkpoint of a thread (`threadId` as stored), newest first. */
  async entriesOf(threadId: string): Promise<GraphCheckpointEntry[]> {
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

  /** The metadata of a stored checkpoint, nothing else deserialized. */
  async metadataOf(entry: GraphCheckpointEntry): Promise<CheckpointMetadata> {
    return (await deserialize(this.serde, entry.record.metadata)) as CheckpointMetadata;
  }

  /** A stored checkpoint as LangGraph reads it. */
  async tupleOf(entry: GraphCheckpointEntry): Promise<CheckpointTuple> {
    const { threadId, ns, record } = entry;
    const checkpoint = (await deserialize(this.serde, record.checkpoint)) as Checkpoint;
    checkpoint.channel_values = {};
    for (const [channel, value] of Object.entries(entry.values)) checkpoint.channel_values[channel] = await deserialize(this.serde, value);
    if (checkpoint.v < 4 && record.parentId !== undefined) await this.migratePendingSends(checkpoint, threadId, ns, record.parentId);
    const tuple: CheckpointTuple = {
      config: { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: record.checkpointId } },
      checkpoint,
      metadata: await this.metadataOf(entry),
      pendingWrites: await this.pendingWritesOf(entry.writes),
    };
    if (record.parentId !== undefined) {
      tuple.parentConfig = { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: record.parentId } };
    }
    return tuple;
  }

  /** Writes in the order live execution applies them (`writesSortKey`), deserialized. */
  async pendingWritesOf(writes: GraphWrite[]): Promise<CheckpointPendingWrite[]> {
    const sorted = [...writes].sort((a, b) => compareWritesSortKeys(writesSortKey(a.taskPath, a.taskId, a.idx), writesSortKey(b.taskPath, b.taskId, b.idx)));
    return Promise.all(sorted.map(async (w): Promise<CheckpointPendingWrite> => [w.taskId, w.channel, await deserialize(this.serde, w.value)]));
  }

  /**
   * Checkpoints before format 4 kept pending sends as writes to TASKS on their parent; they
   * become the TASKS channel, as LangGraph's own savers migrate them (a first version is 1,
   * as `BaseCheckpointSaver.getNextVersion` numbers it).
   */
  private async migratePendingSends(checkpoint: Checkpoint, threadId: string, ns: string, parentId: string): Promise<void> {
    const parent = await this.storage.getCheckpoint(this.tenant, threadId, ns, parentId);
    const sends = await this.pendingWritesOf((parent?.writes ?? []).filter((w) => w.channel === TASKS));
    checkpoint.channel_values[TASKS] = sends.map(([, , value]) => value);
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : 1;
  }
}
