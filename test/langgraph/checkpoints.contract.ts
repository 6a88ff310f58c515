import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RunnableConfig } from '@langchain/core/runnables';
import { emptyCheckpoint, uuid6, type Checkpoint, type CheckpointMetadata } from '@langchain/langgraph-checkpoint';
import type { GraphCheckpointStore } from '../../src/ports/graph-storage.js';
import { AgentplaneCheckpointSaver } from '../../src/langgraph/checkpoint-saver.js';
import { StoredCheckpoints } from '../../src/langgraph/stored-checkpoints.js';
import { ThreadCheckpoints } from '../../src/langgraph/thread-checkpoints.js';

/**
 * What our checkpointer adds to LangGraph's validation suite, the same on both adapters:
 * tenant scope, retention per thread and namespace (carried-over channels and delta chains
 * kept), the size cap, and refusals.
 */
export function graphCheckpointContract(name: string, factory: () => Promise<GraphCheckpointStore>): void {
  describe(`LangGraph checkpointer (${name})`, () => {
    const meta = (step: number, extra: Record<string, unknown> = {}): CheckpointMetadata => ({ source: 'loop', step, parents: {}, ...extra }) as CheckpointMetadata;
    const saverOn = (storage: GraphCheckpointStore, options: { retain?: number; maxCheckpointBytes?: number } = {}) =>
      new AgentplaneCheckpointSaver({ tenant: `t-${randomUUID()}`, storage, ...options });
    /** A saver and, on the same stored checkpoints, the engine's own reads and thread operations. */
    const withThreadCheckpoints = (storage: GraphCheckpointStore) => {
      const stored = new StoredCheckpoints({ tenant: `t-${randomUUID()}`, storage });
      const saver = new AgentplaneCheckpointSaver(stored);
      return { tenant: stored.tenant, saver, checkpoints: new ThreadCheckpoints(stored, saver) };
    };

    /** Puts `count` checkpoints in a chain: `a` changes every step, `b` only in the first. */
    async function chain(saver: AgentplaneCheckpointSaver, threadId: string, count: number, ns = '', metadata = meta) {
      const ids: string[] = [];
      let config: RunnableConfig = { configurable: { thread_id: threadId, checkpoint_ns: ns } };
      for (let step = 0; step < count; step += 1) {
        const checkpoint: Checkpoint = {
          ...emptyCheckpoint(),
          id: uuid6(step),
          channel_values: { a: `a${step}`, b: 'b0' },
          channel_versions: { a: step + 1, b: 1 },
        };
        config = await saver.put(config, checkpoint, metadata(step), step === 0 ? { a: 1, b: 1 } : { a: step + 1 });
        await saver.putWrites(config, [['a', `write${step}`]], `task${step}`);
        ids.push(checkpoint.id);
      }
      return ids;
    }

    it('keeps the newest checkpoints of a thread and namespace, with the channels they carry over', async () => {
      const storage = await factory();
      const saver = saverOn(storage, { retain: 3 });
      const ids = await chain(saver, 'thread', 6);
      await chain(saver, 'thread', 2, 'child:1');
      const listed = [];
      for await (const tuple of saver.list({ configurable: { thread_id: 'thread', checkpoint_ns: '' } })) listed.push(tuple);
      expect(listed.map((t) => t.checkpoint.id)).toEqual(ids.slice(3).reverse());
      const latest = await saver.getTuple({ configurable: { thread_id: 'thread' } });
      // `b` was last written by the first checkpoint, which is gone: its blob stays while held.
      expect(latest?.checkpoint.channel_values).toEqual({ a: 'a5', b: 'b0' });
      expect(latest?.pendingWrites).toEqual([['task5', 'a', 'write5']]);
      expect(latest?.parentConfig?.configurable?.checkpoint_id).toBe(ids[4]);
      expect(await saver.getTuple({ configurable: { thread_id: 'thread', checkpoint_ns: '', checkpoint_id: ids[2] } })).toBeUndefined();
      // A write that arrives for a pruned checkpoint does not bring it back.
      await saver.putWrites({ configurable: { thread_id: 'thread', checkpoint_ns: '', checkpoint_id: ids[0] } }, [['a', 1]], 'late');
      expect(await saver.getTuple({ configurable: { thread_id: 'thread', checkpoint_ns: '', checkpoint_id: ids[0] } })).toBeUndefined();
      const child = [];
      for await (const tuple of saver.list({ configurable: { thread_id: 'thread', checkpoint_ns: 'child:1' } })) child.push(tuple);
      expect(child).toHaveLength(2);
    });

    it('answers a primed read once from the entry read before (none: nothing stored), then reads storage; reads a stored checkpoint\'s metadata and interrupts alone', async () => {
      const storage = await factory();
      const { saver, checkpoints } = withThreadCheckpoints(storage);
      const config = { configurable: { thread_id: 'primed', checkpoint_ns: '' } };
      const before = await checkpoints.entryFor(config);
      expect(before).toBeNull();
      const primed = checkpoints.primedWith(config, before);
      const ids = await chain(saver, 'primed', 2, '', (step) => meta(step, { run_id: `run-${step}` }));
      // Stored since, but the primed read answers what was read: nothing; the next read is storage's.
      expect(await primed.getTuple(config)).toBeUndefined();
      expect((await primed.getTuple(config))?.checkpoint.id).toBe(ids[1]);
      // Another checkpoint of the thread is read from storage, primed or not.
      const first = { configurable: { thread_id: 'primed', checkpoint_ns: '', checkpoint_id: ids[0] } };
      expect((await checkpoints.primedWith(config, null).getTuple(first))?.checkpoint.id).toBe(ids[0]);

      const entry = (await checkpoints.entryFor(config))!;
      expect((await checkpoints.metadataOf(entry)) as Record<string, unknown>).toMatchObject({ step: 1, run_id: 'run-1' });
      expect(await checkpoints.interruptsOf(entry)).toEqual([]);
      const latest = { configurable: { thread_id: 'primed', checkpoint_ns: '', checkpoint_id: ids[1] } };
      await saver.putWrites(latest, [['__interrupt__', [{ id: 'i-b', value: { question: 'B?' } }]]], 'task-b');
      await saver.putWrites(latest, [['__interrupt__', [{ id: 'i-a1', value: 'A1' }, { id: 'i-a2', value: 'A2' }]]], 'task-a');
      const paused = (await checkpoints.entryFor(config))!;
      // In the order LangGraph applies writes (by task id), each task's interrupts in the order raised.
      expect(await checkpoints.interruptsOf(paused)).toEqual([
        { id: 'i-a1', value: 'A1' },
        { id: 'i-a2', value: 'A2' },
        { id: 'i-b', value: { question: 'B?' } },
      ]);
    });

    it('moves a thread\'s version with every write to it, in any namespace, and never back to one it had', async () => {
      const storage = await factory();
      const { saver, tenant } = withThreadCheckpoints(storage);
      const versions: string[] = [];
      const expectNew = async (): Promise<string> => {
        const version = await storage.version(tenant, 'thread');
        expect(version).not.toBe('');
        expect(versions).not.toContain(version);
        versions.push(version);
        return version;
      };
      expect(await storage.version(tenant, 'thread')).toBe('');
      const [first] = await chain(saver, 'thread', 1);
      const afterPut = await expectNew();
      // Reads change nothing; the latest entry carries the version it was read at.
      expect((await storage.getCheckpoint(tenant, 'thread', ''))?.version).toBe(afterPut);
      expect(await storage.version(tenant, 'thread')).toBe(afterPut);
      // A pending write, a special write replacing one, a subgraph's checkpoint, a delete: each a new version.
      const at = { configurable: { thread_id: 'thread', checkpoint_ns: '', checkpoint_id: first } };
      await saver.putWrites(at, [['a', 'more']], 'other-task');
      await expectNew();
      await saver.putWrites(at, [['__interrupt__', 'x']], 'other-task');
      await expectNew();
      await chain(saver, 'thread', 1, 'child:1');
      await expectNew();
      await storage.deleteCheckpoints(tenant, 'thread', [{ ns: '', checkpointId: first! }]);
      await expectNew();
      // Another thread's writes leave this one's version as it is.
      const kept = await storage.version(tenant, 'thread');
      await chain(saver, 'other', 2);
      expect(await storage.version(tenant, 'thread')).toBe(kept);
      // Deleted and written again: versions it never had.
      await storage.deleteThread(tenant, 'thread');
      expect(await storage.version(tenant, 'thread')).toBe('');
      await chain(saver, 'thread', 1);
      await expectNew();
      for (let i = 0; i < 3; i += 1) {
        await saver.putWrites({ configurable: { thread_id: 'thread', checkpoint_ns: '', checkpoint_id: first } }, [['a', i]], `again${i}`);
        await expectNew();
      }
    });

    it("removes a run's checkpoints with their writes, in every namespace, keeping the blobs earlier ones hold", async () => {
      const storage = await factory();
      const { saver, checkpoints } = withThreadCheckpoints(storage);
      const byRun = (step: number) => meta(step, { run_id: step < 2 ? 'first' : 'second' });
      const ids = await chain(saver, 'thread', 4, '', byRun);
      await chain(saver, 'thread', 1, 'child:1', (step) => meta(step, { run_id: 'second' }));
      expect(await checkpoints.deleteRunCheckpoints('thread', 'second')).toBe(3);
      const listed = [];
      for await (const tuple of saver.list({ configurable: { thread_id: 'thread' } })) listed.push(tuple.checkpoint.id);
      expect(listed).toEqual([ids[1], ids[0]]);
      const latest = await saver.getTuple({ configurable: { thread_id: 'thread' } });
      // `b` is held by the first run's checkpoints too: its blob stays.
      expect(latest?.checkpoint.channel_values).toEqual({ a: 'a1', b: 'b0' });
      expect(latest?.pendingWrites).toEqual([['task1', 'a', 'write1']]);
      expect(await checkpoints.deleteRunCheckpoints('thread', 'second')).toBe(0);
      // A checkpoint stored again under a removed id finds none of its old writes.
      const config = { configurable: { thread_id: 'thread', checkpoint_ns: '' } };
      await saver.put(config, { ...emptyCheckpoint(), id: ids[3]!, channel_values: { a: 'again' }, channel_versions: { a: 9 } }, meta(9), { a: 9 });
      const readAgain = await saver.getTuple({ configurable: { ...config.configurable, checkpoint_id: ids[3] } });
      expect(readAgain?.checkpoint.channel_values).toEqual({ a: 'again' });
      expect(readAgain?.pendingWrites).toEqual([]);
      expect(await checkpoints.deleteRunCheckpoints('thread', 'first')).toBe(2);
      expect((await saver.getTuple({ configurable: { thread_id: 'thread' } }))?.checkpoint.id).toBe(ids[3]);
    });

    it('keeps the chain a delta channel needs back to its last snapshot, past the retention', async () => {
      const storage = await factory();
      const saver = saverOn(storage, { retain: 2 });
      // Five supersteps since the snapshot: the newest checkpoint needs its five ancestors.
      await chain(saver, 'delta', 8, '', (step) => meta(step, { counters_since_delta_snapshot: { messages: [step, 5] } }));
      const listed = [];
      for await (const tuple of saver.list({ configurable: { thread_id: 'delta' } })) listed.push(tuple);
      expect(listed).toHaveLength(6);
    });

    it('scopes checkpoints to the tenant', async () => {
      const storage = await factory();
      const saver = saverOn(storage);
      const other = saverOn(storage);
      await chain(saver, 'shared', 2);
      expect(await other.getTuple({ configurable: { thread_id: 'shared' } })).toBeUndefined();
      const listed = [];
      for await (const tuple of other.list({})) listed.push(tuple);
      expect(listed).toEqual([]);
      await other.deleteThread('shared');
      expect(await saver.getTuple({ configurable: { thread_id: 'shared' } })).toBeDefined();
      await saver.deleteThread('shared');
      expect(await saver.getTuple({ configurable: { thread_id: 'shared' } })).toBeUndefined();
      for await (const tuple of saver.list({})) listed.push(tuple);
      expect(listed).toEqual([]);
    });

    it("stores a step's task writes with its checkpoint in one storage call; writes no put follows are stored alone, and before a read", async () => {
      const storage = await factory();
      const calls: string[] = [];
      // The adapter as it is, each call named: which storage calls the saver makes.
      const counted = new Proxy(storage, {
        get: (target, key, receiver) => {
          const value: unknown = Reflect.get(target, key, receiver);
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            calls.push(key === 'putCheckpoint' ? `putCheckpoint+${((args[2] as { writes?: unknown[] }).writes ?? []).length}` : String(key));
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
      const saver = saverOn(counted, { maxCheckpointBytes: 4_000 });
      const first = await saver.put({ configurable: { thread_id: 'step', checkpoint_ns: '' } }, { ...emptyCheckpoint(), id: uuid6(0), channel_values: { a: 0 }, channel_versions: { a: 1 } }, meta(0), { a: 1 });
      calls.length = 0;
      // Two tasks of the step end, then LangGraph puts the step's checkpoint, without waiting between.
      const written = [saver.putWrites(first, [['a', 'from x']], 'task-x'), saver.putWrites(first, [['a', 'from y'], ['b', 2]], 'task-y')];
      const second = await saver.put(first, { ...emptyCheckpoint(), id: uuid6(1), channel_values: { a: 1 }, channel_versions: { a: 2 } }, meta(1), { a: 2 });
      await Promise.all(written);
      expect(calls).toEqual(['putCheckpoint+2']);
      const parent = await saver.getTuple(first);
      expect(parent?.pendingWrites).toEqual([['task-x', 'a', 'from x'], ['task-y', 'a', 'from y'], ['task-y', 'b', 2]]);
      expect((await saver.getTuple({ configurable: { thread_id: 'step' } }))?.checkpoint.id).toBe(second.configurable?.checkpoint_id);

      // Writes no put follows (an interrupt, a task still running beside) are stored on their own.
      calls.length = 0;
      await saver.putWrites(second, [['__interrupt__', [{ value: 'ask' }]]], 'task-z');
      expect(calls).toEqual(['putWrites']);
      // A read of the thread stores what waits first.
      calls.length = 0;
      const late = saver.putWrites(second, [['a', 'late']], 'task-w');
      const read = await saver.getTuple({ configurable: { thread_id: 'step' } });
      await late;
      expect(calls).toEqual(['putWrites', 'getCheckpoint']);
      expect(read?.pendingWrites?.map(([task]) => task).sort()).toEqual(['task-w', 'task-z']);

      // Writes past the cap are refused to their task, alone or beside a put that then stores the rest.
      await expect(saver.putWrites(second, [['a', 'y'.repeat(5_000)]], 'task-s')).rejects.toMatchObject({ code: 'payload_too_large' });
      const refused = expect(saver.putWrites(second, [['a', 'y'.repeat(5_000)]], 'task-u')).rejects.toMatchObject({ code: 'payload_too_large' });
      const accepted = saver.putWrites(second, [['a', 'fits']], 'task-t');
      const third = await saver.put(second, { ...emptyCheckpoint(), id: uuid6(2), channel_values: { a: 2 }, channel_versions: { a: 3 } }, meta(2), { a: 3 });
      await refused;
      await expect(accepted).resolves.toBeUndefined();
      expect((await saver.getTuple(second))?.pendingWrites?.map(([task]) => task).sort()).toEqual(['task-t', 'task-w', 'task-z']);
      expect((await saver.getTuple({ configurable: { thread_id: 'step' } }))?.checkpoint.id).toBe(third.configurable?.checkpoint_id);

      // A checkpoint refused for its size leaves the writes it carried stored.
      const kept = saver.putWrites(third, [['a', 'kept']], 'task-v');
      const big = { ...emptyCheckpoint(), id: uuid6(3), channel_values: { a: 'x'.repeat(5_000) }, channel_versions: { a: 4 } };
      await expect(saver.put(third, big, meta(3), { a: 4 })).rejects.toMatchObject({ code: 'payload_too_large' });
      await expect(kept).resolves.toBeUndefined();
      const after = await saver.getTuple({ configurable: { thread_id: 'step' } });
      expect(after?.checkpoint.id).toBe(third.configurable?.checkpoint_id);
      expect(after?.pendingWrites?.map(([task]) => task)).toContain('task-v');
    });

    it('refuses a checkpoint larger than the cap, storing nothing', async () => {
      const storage = await factory();
      const saver = saverOn(storage, { maxCheckpointBytes: 2_000 });
      const checkpoint: Checkpoint = { ...emptyCheckpoint(), channel_values: { big: 'x'.repeat(3_000) }, channel_versions: { big: 1 } };
      await expect(saver.put({ configurable: { thread_id: 'big' } }, checkpoint, meta(0), { big: 1 })).rejects.toMatchObject({ code: 'payload_too_large' });
      expect(await saver.getTuple({ configurable: { thread_id: 'big' } })).toBeUndefined();
    });

    it('refuses identifiers storage cannot hold', async () => {
      const saver = saverOn(await factory());
      await expect(saver.put({ configurable: { thread_id: 'a\u0000b' } }, emptyCheckpoint(), meta(0), {})).rejects.toMatchObject({ code: 'bad_request' });
      await expect(saver.put({ configurable: { thread_id: '' } }, emptyCheckpoint(), meta(0), {})).rejects.toMatchObject({ code: 'bad_request' });
      await expect(saver.getTuple({ configurable: { thread_id: 't', checkpoint_ns: 'x\u0000' } })).rejects.toMatchObject({ code: 'bad_request' });
    });
  });
}
