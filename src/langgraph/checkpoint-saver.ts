import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  WRITES_IDX_MAP,
  copyCheckpoint,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
} from '@langchain/langgraph-checkpoint';
import type { GraphWrite } from '../ports/graph-storage.js';
import { AppError, badRequest } from '../domain/errors.js';
import { deserialize, serialize, storageId } from './serialized.js';
import { LIST_PAGE, StoredCheckpoints, type StoredCheckpointsOptions } from './stored-checkpoints.js';

export type AgentplaneCheckpointSaverOptions = StoredCheckpointsOptions;

const missing = (what: string, field: string) =>
  badRequest(`Failed to ${what}: the config has no "${field}" in its "configurable" property (the thread is the agentplane session).`);

/**
 * LangGraph's `BaseCheckpointSaver` on agentplane's storage, for one tenant: a thread is a
 * session. Checkpoints keep their channel values as blobs per channel version, so a put stores
 * only the channels that changed (`newVersions`) and a read rebuilds the rest from the blobs
 * of earlier versions. Retention keeps the newest checkpoints per namespace (see
 * {@link StoredCheckpointsOptions.retain}). Only what LangGraph asks of a saver: the engine's
 * and the thread operations' own reads are {@link ThreadCheckpoints}, on the same
 * {@link StoredCheckpoints}.
 */
export class AgentplaneCheckpointSaver extends BaseCheckpointSaver {
  private readonly stored: StoredCheckpoints;

  /** On its own storage (`options`), or on a tenant's {@link StoredCheckpoints} shared with its {@link ThreadCheckpoints}. */
  constructor(options: AgentplaneCheckpointSaverOptions | StoredCheckpoints) {
    const stored = options instanceof StoredCheckpoints ? options : new StoredCheckpoints(options);
    super(stored.serde);
    this.stored = stored;
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const entry = await this.stored.entryFor(config);
    return entry ? this.stored.tupleOf(entry) : undefined;
  }

  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { tenant, storage, serde, waiting } = this.stored;
    const { filter, before } = options;
    let left = options.limit ?? Number.POSITIVE_INFINITY;
    const ns = config.configurable?.checkpoint_ns === undefined ? undefined : storageId('checkpoint_ns', config.configurable.checkpoint_ns, true);
    const onlyId: unknown = config.configurable?.checkpoint_id;
    const beforeId: unknown = before?.configurable?.checkpoint_id;
    for await (const threadId of this.threads(config.configurable?.thread_id)) {
      await waiting.flushThread(threadId);
      let cursor: string | undefined;
      do {
        const page = await storage.listCheckpoints(tenant, threadId, {
          ns,
          before: beforeId ? storageId('checkpoint_id', beforeId) : undefined,
          cursor,
          // Without a filter every checkpoint read is yielded: read no more than are wanted.
          limit: filter ? LIST_PAGE : Math.min(LIST_PAGE, left),
        });
        for (const entry of page.entries) {
          if (left <= 0) return;
          if (onlyId && entry.record.checkpointId !== onlyId) continue;
          const metadata = (await deserialize(serde, entry.record.metadata)) as Record<string, unknown>;
          if (filter && !Object.entries(filter).every(([key, value]) => metadata[key] === value)) continue;
          left -= 1;
          yield this.stored.tupleOf(entry);
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
      const page = await this.stored.storage.listThreads(this.stored.tenant, after, LIST_PAGE);
      yield* page;
      if (page.length < LIST_PAGE) return;
      after = page.at(-1);
    }
  }

  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    if (config.configurable?.thread_id === undefined) throw missing('put a checkpoint', 'thread_id');
    const { stored } = this;
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
      metadata: await serialize(this.serde, stored.runMetadata ? checkpointMetadataOf(metadata, config) : withRunId(metadata, config)),
      versions,
    };
    // The step's task writes waiting go with it; the storage refuses a checkpoint whose whole
    // state passes the cap (it knows the stored values' sizes), the writes then stored still.
    const taken = stored.waiting.take(threadId, ns);
    const writes = taken ? await taken.ready() : [];
    try {
      await stored.storage.putCheckpoint(stored.tenant, threadId, {
        ns,
        record,
        blobs,
        retain: Math.max(stored.retain, deltaDepth(metadata) + 1),
        maxStateBytes: stored.maxCheckpointBytes,
        requireSession: stored.requireSession,
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
    await this.stored.waiting.add(
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
    const { maxCheckpointBytes } = this.stored;
    if (bytes > maxCheckpointBytes) {
      throw new AppError('payload_too_large', `The task's writes take ${bytes} bytes, more than the limit of ${maxCheckpointBytes} (SERVICE_MAX_STATE_BYTES).`);
    }
    return stored;
  }

  async deleteThread(threadId: string): Promise<void> {
    const thread = storageId('thread_id', threadId);
    await this.stored.waiting.flushThread(thread);
    await this.stored.storage.deleteThread(this.stored.tenant, thread);
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

/** Keys of `configurable` a checkpoint's metadata does not take (they name the checkpoint itself), as LangGraph's server. */
const NOT_METADATA = new Set(['checkpoint_ns', 'checkpoint_id', 'run_id', 'thread_id']);

/**
 * A checkpoint's metadata as LangGraph's server stores it: the run's `configurable` (but the
 * checkpoint's own names and `__` internals), the run's metadata (`config.metadata`: what the
 * client gave the run), then LangGraph's own; and the run id, so a run finds its checkpoints
 * (a taken-over job, a rollback). `getHistory({ metadata })` finds a run's checkpoints by it.
 */
function checkpointMetadataOf(metadata: CheckpointMetadata, config: RunnableConfig): CheckpointMetadata {
  const merged: Record<string, unknown> = {};
  const configurable = config.configurable ?? {};
  for (const key in configurable) if (Object.hasOwn(configurable, key) && !key.startsWith('__') && !NOT_METADATA.has(key)) merged[key] = configurable[key];
  return withRunId({ ...merged, ...config.metadata, ...metadata } as CheckpointMetadata, config);
}

/**
 * The metadata with the run that wrote the checkpoint (`configurable.run_id`, as LangGraph's
 * server records it): a worker taking over a run finds how far that run got.
 */
function withRunId(metadata: CheckpointMetadata, config: RunnableConfig): CheckpointMetadata {
  const runId: unknown = config.configurable?.run_id;
  if (typeof runId !== 'string' || 'run_id' in metadata) return metadata;
  return { ...metadata, run_id: runId } as CheckpointMetadata;
}
