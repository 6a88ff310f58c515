import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RunnableConfig } from '@langchain/core/runnables';
import { emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import { MemoryGraphCheckpointStore } from '../../src/adapters/memory/graph-checkpoints.js';
import { redisGraphCheckpointStore } from '../../src/adapters/redis/graph-checkpoints.js';
import { RedisKeys } from '../../src/adapters/redis/keys.js';
import { AgentplaneCheckpointSaver } from '../../src/langgraph/checkpoint-saver.js';
import { uniquePrefix, useRedis } from '../support/redis.js';
import { graphCheckpointContract } from './checkpoints.contract.js';

const redis = useRedis();

graphCheckpointContract('memory', async () => new MemoryGraphCheckpointStore());

graphCheckpointContract('redis', async () => redisGraphCheckpointStore(redis.connect(), uniquePrefix('lg-checkpoints')));

describe('LangGraph checkpoints on Redis', () => {
  it('stay bounded: pruned checkpoints take their writes and unheld blobs; a deleted thread leaves no key', async () => {
    const client = redis.connect();
    const prefix = uniquePrefix('lg-bounded');
    const tenant = `t-${randomUUID()}`;
    const saver = new AgentplaneCheckpointSaver({ tenant, storage: redisGraphCheckpointStore(client, prefix), retain: 3 });
    let config: RunnableConfig = { configurable: { thread_id: 'session-1', checkpoint_ns: '' } };
    const ids: string[] = [];
    const put = async (step: number) => {
      const checkpoint = { ...emptyCheckpoint(), id: uuid6(step), channel_values: { a: step, b: 'kept' }, channel_versions: { a: step + 1, b: 1 } };
      config = await saver.put(config, checkpoint, { source: 'loop', step, parents: {} }, step === 0 ? { a: 1, b: 1 } : { a: step + 1 });
      await saver.putWrites(config, [['a', step], ['b', step]], `task${step}`);
      ids.push(checkpoint.id);
    };
    for (let step = 0; step < 20; step += 1) await put(step);
    // Writes that arrive for a checkpoint already pruned go with the next put's pruning.
    await saver.putWrites({ configurable: { thread_id: 'session-1', checkpoint_ns: '', checkpoint_id: ids[0] } }, [['a', 0]], 'late');
    await put(20);
    const keys = new RedisKeys(prefix).graphThread(tenant, 'session-1');
    expect(await client.zcard(keys.checkpoints)).toBe(3);
    // The three checkpoints' records and the thread's version.
    expect(await client.hlen(keys.records)).toBe(4);
    expect(Number(await client.hget(keys.records, 'version'))).toBeGreaterThan(1e15);
    // a's three retained versions and b's one.
    expect(await client.hlen(keys.blobs)).toBe(4);
    expect(await client.hlen(keys.blobRefs)).toBe(4);
    expect(await client.hlen(keys.writes)).toBe(6);
    expect(await client.zcard(keys.writeIndex)).toBe(6);

    await saver.deleteThread('session-1');
    expect(await client.exists(...Object.values(keys))).toBe(0);
    expect(await client.zscore(new RedisKeys(prefix).graphThreads(tenant), 'session-1')).toBeNull();
  });
});
