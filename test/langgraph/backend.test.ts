import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createMemoryBackend } from '../../src/adapters/memory/backend.js';
import { createRedisBackend } from '../../src/adapters/redis/backend.js';
import { RedisKeys } from '../../src/adapters/redis/keys.js';
import { loadConfig } from '../../src/config.js';
import { DEFAULT_GRAPH_ITEMS_MAX_BYTES, DEFAULT_STORAGE_LIMITS } from '../../src/domain/types.js';
import type { Backend } from '../../src/ports/backend.js';
import { graphKeysLeft } from '../support/graph-keys.js';
import { uniquePrefix, useRedis } from '../support/redis.js';

/**
 * The LangGraph storage as the backends build it: on the store's storage (a session's delete
 * removes the thread the backend's checkpoints hold), the item cap from the options, and the
 * setting it comes from.
 */
const CAP_BYTES = 1_000;
const common = { limits: DEFAULT_STORAGE_LIMITS, eventsRetain: 100, concurrency: 1, shutdownTimeoutMs: 1_000, graphItemsMaxBytes: CAP_BYTES };

const redis = useRedis();

interface Built {
  backend: Backend;
  /** Redis only: keys of a thread left (see graphKeysLeft). */
  keysLeft?: (tenant: string, threadId: string) => Promise<number>;
  close(): Promise<void>;
}

function graphWiring(name: string, build: () => Built): void {
  describe(`LangGraph storage of the ${name} backend`, () => {
    it('shares the store: deleting a session removes its thread; the tenant memory items stay', async () => {
      const { backend, keysLeft, close } = build();
      try {
        const tenant = `t-${randomUUID()}`;
        const [id, other] = [randomUUID(), randomUUID()];
        for (const sessionId of [id, other]) {
          const run = await backend.store.runs.createRun(tenant, { run_id: randomUUID(), session_id: sessionId, agent_id: 'graph' });
          await backend.store.runs.updateRun(tenant, run.id, { status: 'completed' });
          const record = { checkpointId: 'c1', checkpoint: '{}', metadata: '{}', versions: { a: '1' } };
          await backend.graphCheckpoints.putCheckpoint(tenant, sessionId, { ns: '', record, blobs: { a: '"x"' }, retain: 5, maxStateBytes: 1024 });
          await backend.graphCheckpoints.putWrites(tenant, sessionId, '', 'c1', [{ taskId: 't', idx: 0, channel: 'a', value: '"w"', taskPath: '' }]);
        }
        await backend.graphItems.putItem(tenant, ['memories'], 'k', '"kept"');
        if (keysLeft) expect(await keysLeft(tenant, id)).toBe(7);

        await backend.store.sessions.deleteSession(tenant, id);
        expect(await backend.graphCheckpoints.getCheckpoint(tenant, id, '')).toBeNull();
        expect(await backend.graphCheckpoints.listThreads(tenant, undefined, 10)).toEqual([other]);
        if (keysLeft) expect(await keysLeft(tenant, id)).toBe(0);
        expect(await backend.graphCheckpoints.getCheckpoint(tenant, other, '')).toMatchObject({ values: { a: '"x"' }, writes: [{ taskId: 't' }] });
        expect(await backend.graphItems.getItem(tenant, ['memories'], 'k')).toMatchObject({ value: '"kept"' });
      } finally {
        await close();
      }
    });

    it('caps the items of a tenant at graphItemsMaxBytes, writing nothing past it', async () => {
      const { backend, close } = build();
      try {
        const tenant = `t-${randomUUID()}`;
        await backend.graphItems.putItem(tenant, ['n'], 'small', '"x"');
        const used = await backend.graphItems.usedBytes(tenant);
        await expect(backend.graphItems.putItem(tenant, ['n'], 'big', JSON.stringify('x'.repeat(CAP_BYTES)))).rejects.toMatchObject({
          code: 'payload_too_large',
          message: expect.stringContaining(String(CAP_BYTES)),
        });
        expect(await backend.graphItems.getItem(tenant, ['n'], 'big')).toBeNull();
        expect(await backend.graphItems.usedBytes(tenant)).toBe(used);
      } finally {
        await close();
      }
    });
  });
}

graphWiring('memory', () => {
  const backend = createMemoryBackend(common);
  return { backend, close: () => backend.close() };
});

graphWiring('redis', () => {
  const keyPrefix = uniquePrefix('lg-backend');
  const backend = createRedisBackend({ ...common, connection: { mode: 'single', url: redis.url }, keyPrefix, lockDurationMs: 30_000 });
  // A client of the test's own: the keys must be where the backend's store keeps its sessions.
  const client = new Redis(redis.url);
  return {
    backend,
    keysLeft: graphKeysLeft(client, new RedisKeys(keyPrefix)),
    close: async () => {
      client.disconnect();
      await backend.close();
    },
  };
});

describe('SERVICE_LANGGRAPH_STORE_MAX_BYTES', () => {
  it('defaults to 64 MiB, takes a byte count, and refuses 0 (no setting turns the cap off)', () => {
    expect(loadConfig({}).SERVICE_LANGGRAPH_STORE_MAX_BYTES).toBe(DEFAULT_GRAPH_ITEMS_MAX_BYTES);
    expect(DEFAULT_GRAPH_ITEMS_MAX_BYTES).toBe(64 * 1024 * 1024);
    expect(loadConfig({ SERVICE_LANGGRAPH_STORE_MAX_BYTES: '1048576' }).SERVICE_LANGGRAPH_STORE_MAX_BYTES).toBe(1_048_576);
    for (const bad of ['0', '-1', '1.5', 'lots']) {
      expect(() => loadConfig({ SERVICE_LANGGRAPH_STORE_MAX_BYTES: bad })).toThrow(/SERVICE_LANGGRAPH_STORE_MAX_BYTES/);
    }
  });
});
