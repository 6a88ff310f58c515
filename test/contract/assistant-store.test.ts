import { describe, expect, it } from 'vitest';
import { MemoryAssistantStore } from '../../src/adapters/memory/assistant-store.js';
import { redisAssistantStore } from '../../src/adapters/redis/assistant-store.js';
import { AppError } from '../../src/domain/errors.js';
import type { AssistantLimits, AssistantRecord, AssistantStore } from '../../src/ports/assistant-store.js';
import { uniquePrefix, useRedis } from '../support/redis.js';

const redis = useRedis();

const LIMITS: AssistantLimits = { maxPerTenant: 3, maxVersions: 3 };

const record = (id: string, fields: Partial<AssistantRecord> = {}): AssistantRecord => ({
  assistant_id: id,
  graph_id: 'g',
  name: 'n',
  description: null,
  config: { configurable: { k: 1 } },
  context: {},
  metadata: { m: 'v' },
  version: 1,
  created_at: '2026-11-28T10:00:00.000Z',
  updated_at: '2026-11-28T10:00:00.000Z',
  ...fields,
});

const tooLarge = (error: unknown) => error instanceof AppError && error.code === 'payload_too_large';

/** The stored assistants' contract, on both adapters. */
function assistantStoreContract(name: string, make: () => AssistantStore): void {
  describe(`AssistantStore contract: ${name}`, () => {
    it('creates once per id and tenant; answers the existing one otherwise, writing nothing', async () => {
      const store = make();
      expect(await store.create('t1', record('a1'))).toBeNull();
      expect(await store.create('t1', record('a1', { name: 'other' }))).toEqual(record('a1'));
      expect(await store.get('t1', 'a1')).toEqual({ assistant: record('a1'), versions: 1 });
      const { updated_at: _updated, ...first } = record('a1');
      expect(await store.versions('t1', 'a1')).toEqual([first]);
      // Tenants are apart: the same id in another tenant is another assistant.
      expect(await store.get('t2', 'a1')).toBeNull();
      expect(await store.create('t2', record('a1', { name: 'of t2' }))).toBeNull();
      expect((await store.get('t1', 'a1'))!.assistant.name).toBe('n');
      expect((await store.list('t2')).map((a) => a.name)).toEqual(['of t2']);
    });

    it("refuses an assistant past the tenant's cap (payload_too_large), storing nothing", async () => {
      const store = make();
      for (const id of ['c1', 'c2', 'c3']) expect(await store.create('cap', record(id))).toBeNull();
      await expect(store.create('cap', record('c4'))).rejects.toSatisfy(tooLarge);
      expect(await store.get('cap', 'c4')).toBeNull();
      expect(await store.versions('cap', 'c4')).toBeNull();
      expect((await store.list('cap')).map((a) => a.assistant_id).sort()).toEqual(['c1', 'c2', 'c3']);
      // An existing id is answered even at the cap.
      expect(await store.create('cap', record('c1'))).toEqual(record('c1'));
      expect(await store.delete('cap', 'c2')).toBe(true);
      expect(await store.create('cap', record('c4'))).toBeNull();
    });

    it('adds versions when the count read still holds (stale otherwise), up to the cap; sets a version latest without adding one', async () => {
      const store = make();
      await store.create('v', record('a'));
      const second = record('a', { version: 2, name: 'two', updated_at: '2026-11-28T11:00:00.000Z' });
      expect(await store.addVersion('v', second, 1)).toBe('ok');
      expect(await store.addVersion('v', record('a', { version: 2 }), 1)).toBe('stale');
      expect(await store.addVersion('v', record('missing', { version: 2 }), 1)).toBe('missing');
      expect(await store.get('v', 'a')).toEqual({ assistant: second, versions: 2 });
      const versions = await store.versions('v', 'a');
      expect(versions!.map((x) => [x.version, x.name, x.created_at])).toEqual([
        [2, 'two', '2026-11-28T11:00:00.000Z'],
        [1, 'n', '2026-11-28T10:00:00.000Z'],
      ]);

      const back = record('a', { version: 1, updated_at: '2026-11-28T12:00:00.000Z' });
      expect(await store.setLatest('v', back, 1)).toBe('stale');
      expect(await store.setLatest('v', back, 2)).toBe('ok');
      expect(await store.get('v', 'a')).toEqual({ assistant: back, versions: 2 });

      expect(await store.addVersion('v', record('a', { version: 3 }), 2)).toBe('ok');
      await expect(store.addVersion('v', record('a', { version: 4 }), 3)).rejects.toSatisfy(tooLarge);
      expect((await store.get('v', 'a'))!.versions).toBe(3);
      expect(await store.setLatest('v', back, 3)).toBe('ok');
    });

    it('lets one of concurrent changes from the same read win', async () => {
      const store = make();
      await store.create('race', record('r'));
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => store.addVersion('race', record('r', { version: 2, name: `w${i}` }), 1)));
      expect(answers.filter((a) => a === 'ok')).toHaveLength(1);
      expect((await store.versions('race', 'r'))!.map((v) => v.version)).toEqual([2, 1]);
    });

    it('deletes an assistant with its versions; a new one of the same id starts again at version 1', async () => {
      const store = make();
      await store.create('d', record('x'));
      await store.addVersion('d', record('x', { version: 2 }), 1);
      expect(await store.delete('d', 'x')).toBe(true);
      expect(await store.delete('d', 'x')).toBe(false);
      expect(await store.get('d', 'x')).toBeNull();
      expect(await store.versions('d', 'x')).toBeNull();
      expect(await store.create('d', record('x'))).toBeNull();
      expect(await store.get('d', 'x')).toEqual({ assistant: record('x'), versions: 1 });
    });
  });
}

assistantStoreContract('memory', () => new MemoryAssistantStore(LIMITS));
assistantStoreContract('redis', () => redisAssistantStore(redis.connect(), { keyPrefix: uniquePrefix(), limits: LIMITS }));
