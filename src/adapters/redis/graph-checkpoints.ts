import type {
  GraphCheckpointEntry,
  GraphCheckpointPage,
  GraphCheckpointPut,
  GraphCheckpointQuery,
  GraphCheckpointRef,
  GraphCheckpointStore,
  GraphWrite,
} from '../../ports/graph-storage.js';
import type { RedisClient } from './connection.js';
import { redisContext, type RedisContext } from './context.js';
import { mapFailures } from './errors.js';
import { blobField, checkpointMember, childRange, splitCheckpointMember, splitWriteField, writeField } from '../shared/graph-members.js';

/** A checkpoint record as the scripts store it: JSON with the versions under `v` (the scripts read them). */
interface StoredRecord {
  p?: string;
  c: string;
  m: string;
  v: Record<string, string>;
}

/** A reply entry of readGraphCheckpoints: member, record, blob field/value pairs, write field/value pairs. */
type RawEntry = [string, string, string[], string[]];
/** The reply of readGraphCheckpoints: the thread's version, then the entries. */
type RawRead = [string, ...RawEntry[]];

const pairs = (flat: string[]): [string, string][] => {
  const out: [string, string][] = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  return out;
};

/** The script arguments of pending writes against a checkpoint: field, value, replace ("1" for a negative index), … */
const writeArgs = (ns: string, checkpointId: string, writes: GraphWrite[]): string[] =>
  writes.flatMap((w) => [writeField(ns, checkpointId, w.taskId, w.idx), JSON.stringify([w.channel, w.taskPath, w.value]), w.idx < 0 ? '1' : '0']);

/**
 * LangGraph checkpoints on Redis, under the tenant's hash tag (one slot per tenant, like its
 * sessions): plain commands and Lua, no module (RediSearch) needed. A put and a read are one
 * script each, so one round trip; a list page is two.
 */
class RedisGraphCheckpoints implements GraphCheckpointStore {
  constructor(private readonly context: RedisContext) {}

  private threadKeys(tenant: string, threadId: string) {
    const k = this.context.keys.graphThread(tenant, threadId);
    return { ...k, read: [k.checkpoints, k.records, k.blobs, k.writeIndex, k.writes] };
  }

  async putCheckpoint(tenant: string, threadId: string, put: GraphCheckpointPut): Promise<void> {
    const k = this.threadKeys(tenant, threadId);
    const { record } = put;
    const stored: StoredRecord = { ...(record.parentId === undefined ? {} : { p: record.parentId }), c: record.checkpoint, m: record.metadata, v: record.versions };
    const blobs = Object.entries(put.blobs).flatMap(([channel, value]) => [blobField(put.ns, channel, record.versions[channel]!), value]);
    const recordBytes = Buffer.byteLength(record.checkpoint) + Buffer.byteLength(record.metadata);
    const writes = (put.writes ?? []).flatMap((batch) => writeArgs(put.ns, batch.checkpointId, batch.writes));
    await this.context.script(
      'putGraphCheckpoint',
      [this.context.keys.graphThreads(tenant), k.checkpoints, k.records, k.blobs, k.blobRefs, k.writeIndex, k.writes, this.context.keys.session(tenant, threadId)],
      [threadId, checkpointMember(put.ns, record.checkpointId), JSON.stringify(stored), put.retain, put.maxStateBytes, put.requireSession ? '1' : '0', recordBytes, writes.length / 3, ...writes, ...blobs],
    );
  }

  async putWrites(tenant: string, threadId: string, ns: string, checkpointId: string, writes: GraphWrite[], options: { requireSession?: boolean } = {}): Promise<void> {
    const k = this.threadKeys(tenant, threadId);
    const args = writeArgs(ns, checkpointId, writes);
    await this.context.script('putGraphWrites', [k.writeIndex, k.writes, this.context.keys.session(tenant, threadId), k.records], [threadId, options.requireSession ? '1' : '0', ...args]);
  }

  async version(tenant: string, threadId: string): Promise<string> {
    return (await this.context.redis.hget(this.context.keys.graphThread(tenant, threadId).records, 'version')) ?? '';
  }

  async getCheckpoint(tenant: string, threadId: string, ns: string, checkpointId?: string): Promise<GraphCheckpointEntry | null> {
    const args = checkpointId === undefined ? ['latest', ns] : ['members', checkpointMember(ns, checkpointId)];
    const [entry] = await this.read(tenant, threadId, args);
    return entry ?? null;
  }

  async listCheckpoints(tenant: string, threadId: string, query: GraphCheckpointQuery): Promise<GraphCheckpointPage> {
    const k = this.threadKeys(tenant, threadId);
    const range = query.ns === undefined ? { min: '-', max: '+' } : { min: `[${childRange(query.ns).min}`, max: `(${childRange(query.ns).max}` };
    if (query.cursor !== undefined) range.max = `(${query.cursor}`;
    else if (query.ns !== undefined && query.before !== undefined) range.max = `(${checkpointMember(query.ns, query.before)}`;
    const members = await this.context.redis.zrevrangebylex(k.checkpoints, range.max, range.min, 'LIMIT', 0, query.limit);
    const wanted = members.filter((m) => query.before === undefined || splitCheckpointMember(m).checkpointId < query.before);
    const entries = wanted.length === 0 ? [] : await this.read(tenant, threadId, ['members', ...wanted]);
    return members.length === query.limit ? { entries, next: members.at(-1)! } : { entries };
  }

  private async read(tenant: string, threadId: string, args: string[]): Promise<GraphCheckpointEntry[]> {
    const [version, ...raw] = await this.context.script<RawRead>('readGraphCheckpoints', this.threadKeys(tenant, threadId).read, args);
    return raw.map(([member, json, blobs, writes]) => {
      const { ns, checkpointId } = splitCheckpointMember(member);
      const record = JSON.parse(json) as StoredRecord;
      return {
        threadId,
        ns,
        record: { checkpointId, ...(record.p === undefined ? {} : { parentId: record.p }), checkpoint: record.c, metadata: record.m, versions: record.v },
        values: Object.fromEntries(pairs(blobs).map(([field, value]) => [field.split('\u0000')[1]!, value])),
        writes: pairs(writes).map(([field, value]) => {
          const [channel, taskPath, serialized] = JSON.parse(value) as [string, string, string];
          return { ...splitWriteField(field), channel, taskPath, value: serialized };
        }),
        version: String(version),
      };
    });
  }

  async listThreads(tenant: string, after: string | undefined, limit: number): Promise<string[]> {
    return this.context.redis.zrangebylex(this.context.keys.graphThreads(tenant), after === undefined ? '-' : `(${after}`, '+', 'LIMIT', 0, limit);
  }

  async deleteCheckpoints(tenant: string, threadId: string, checkpoints: readonly GraphCheckpointRef[]): Promise<void> {
    if (checkpoints.length === 0) return;
    const k = this.threadKeys(tenant, threadId);
    const members = checkpoints.map((c) => checkpointMember(c.ns, c.checkpointId));
    await this.context.script('deleteGraphCheckpoints', [k.checkpoints, k.records, k.blobs, k.blobRefs, k.writeIndex, k.writes], members);
  }

  async deleteThread(tenant: string, threadId: string): Promise<void> {
    const k = this.context.keys.graphThread(tenant, threadId);
    await this.context.redis
      .multi()
      .del(k.checkpoints, k.records, k.blobs, k.blobRefs, k.writeIndex, k.writes)
      .zrem(this.context.keys.graphThreads(tenant), threadId)
      .exec();
  }
}

/** The LangGraph checkpoint storage on Redis; answers AppError `unavailable` while Redis is unreachable. */
export function redisGraphCheckpointStore(redis: RedisClient, keyPrefix = 'agentplane'): GraphCheckpointStore {
  return mapFailures(new RedisGraphCheckpoints(redisContext(redis, keyPrefix)));
}
