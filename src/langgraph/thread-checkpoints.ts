import type { RunnableConfig } from '@langchain/core/runnables';
import { INTERRUPT, getCheckpointId, type CheckpointMetadata } from '@langchain/langgraph-checkpoint';
import type { GraphCheckpointEntry, GraphCheckpointRef } from '../ports/graph-storage.js';
import type { AgentplaneCheckpointSaver } from './checkpoint-saver.js';
import { deserialize, serialize, storageId } from './serialized.js';
import type { StoredCheckpoints } from './stored-checkpoints.js';

/**
 * What the engine and the thread operations do with a tenant's checkpoints beside LangGraph's
 * saver: their own reads (a thread's version, its latest stored checkpoint, that checkpoint's
 * metadata and interrupts, each read no further than needed), the saver primed with a read
 * already made, and the thread operations a saver has no method for (copy, rollback). On the
 * same {@link StoredCheckpoints} as the saver: the writes it holds back are stored first.
 */
export class ThreadCheckpoints {
  constructor(
    private readonly stored: StoredCheckpoints,
    private readonly saver: AgentplaneCheckpointSaver,
  ) {}

  /** The thread's version in storage ({@link GraphCheckpointStore.version}): "" for a thread with nothing stored. */
  async versionOf(threadId: string): Promise<string> {
    const thread = storageId('thread_id', threadId);
    await this.stored.waiting.flushThread(thread);
    return this.stored.storage.version(this.stored.tenant, thread);
  }

  /** The stored checkpoint the saver's `getTuple` reads for `config`, as stored (nothing deserialized); null for none. */
  entryFor(config: RunnableConfig): Promise<GraphCheckpointEntry | null> {
    return this.stored.entryFor(config);
  }

  /** The metadata of a stored checkpoint (as {@link entryFor} reads it), nothing else deserialized. */
  metadataOf(entry: GraphCheckpointEntry): Promise<CheckpointMetadata> {
    return this.stored.metadataOf(entry);
  }

  /** The interrupts a stored checkpoint's tasks raised (its pending `__interrupt__` writes), in the order they apply. */
  async interruptsOf(entry: GraphCheckpointEntry): Promise<{ id?: unknown; value?: unknown }[]> {
    const writes = await this.stored.pendingWritesOf(entry.writes.filter((write) => write.channel === INTERRUPT));
    return writes.flatMap(([, , value]) => (Array.isArray(value) ? value : [value])) as { id?: unknown; value?: unknown }[];
  }

  /**
   * The saver, except that the read of `config` answers `entry`, read already (by
   * {@link entryFor}; null: nothing stored) the first time: a caller that looked at the stored
   * checkpoint first does not read it twice.
   */
  primedWith(config: RunnableConfig, entry: GraphCheckpointEntry | null): AgentplaneCheckpointSaver {
    const { saver, stored } = this;
    const primed = Object.create(saver) as AgentplaneCheckpointSaver;
    const same = (asked: RunnableConfig) =>
      asked.configurable?.thread_id === config.configurable?.thread_id &&
      (asked.configurable?.checkpoint_ns ?? '') === (config.configurable?.checkpoint_ns ?? '') &&
      getCheckpointId(asked) === getCheckpointId(config);
    // Once: a later read of the same config (a getState after a run) reads what is stored then.
    let answered = false;
    primed.getTuple = (asked: RunnableConfig) => {
      if (answered || !same(asked)) return saver.getTuple(asked);
      answered = true;
      return entry ? stored.tupleOf(entry) : Promise.resolve(undefined);
    };
    return primed;
  }

  /**
   * Removes every checkpoint of `threadId` that run `runId` wrote (metadata `run_id`, each
   * namespace) with its writes: the thread goes back to where it was before the run (a
   * rollback). Resolves with how many went.
   */
  async deleteRunCheckpoints(threadId: string, runId: string): Promise<number> {
    const { stored } = this;
    const thread = storageId('thread_id', threadId);
    const refs: GraphCheckpointRef[] = [];
    for (const entry of await stored.entriesOf(thread)) {
      const metadata = (await deserialize(stored.serde, entry.record.metadata)) as Record<string, unknown>;
      if (metadata.run_id === runId) refs.push({ ns: entry.ns, checkpointId: entry.record.checkpointId });
    }
    await stored.storage.deleteCheckpoints(stored.tenant, thread, refs);
    return refs.length;
  }

  /**
   * Copies every checkpoint of `threadId` (each namespace, its channel values and pending
   * writes, as stored) to `toThreadId`, as LangGraph's server copies a thread: a metadata
   * `thread_id` naming the source names the copy. The copy keeps every checkpoint the source
   * held; later puts prune it as any thread. `toThreadId` should hold no checkpoints yet.
   */
  async copyThread(threadId: string, toThreadId: string): Promise<void> {
    const { stored } = this;
    const { tenant, storage, serde, requireSession } = stored;
    const from = storageId('thread_id', threadId);
    const to = storageId('thread_id', toThreadId);
    const entries = await stored.entriesOf(from);
    for (const entry of entries.reverse()) {
      const metadata = (await deserialize(serde, entry.record.metadata)) as Record<string, unknown>;
      const record = metadata.thread_id === from ? { ...entry.record, metadata: await serialize(serde, { ...metadata, thread_id: to }) } : entry.record;
      await storage.putCheckpoint(tenant, to, {
        ns: entry.ns,
        record,
        blobs: entry.values,
        retain: Math.max(stored.retain, entries.length),
        maxStateBytes: stored.maxCheckpointBytes,
        requireSession,
      });
      if (entry.writes.length > 0) await storage.putWrites(tenant, to, entry.ns, record.checkpointId, entry.writes, { requireSession });
    }
  }
}
