import { describe, expect, it } from 'vitest';
import { MemoryAssistantStore } from '../../src/adapters/memory/assistant-store.js';
import { redisAssistantStore } from '../../src/adapters/redis/assistant-store.js';
import { AppError } from '../../src/domain/errors.js';
import type { AssistantLimits, AssistantRecord, AssistantStore } from '../../src/ports/assistant-store.js';
import { uniquePrefix, useRedis } from '../support/redis.js';

const redis = useRedis();

const LIMITS: AssistantLimits = { maxPerTenant: 3, maxVersions: 3, maxTenantBytes: 1024 * 1024 };

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
function assistantStoreContract(name: string, make: (limits?: Partial<AssistantLimits>) => AssistantStore): void {
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
      expect(await store.getMany('t2', await store.ids('t2'))).toEqual([record('a1', { name: 'of t2' })]);
    });

    it("refuses an assistant past the tenant's cap (payload_too_large), storing nothing", async () => {
      const store = make();
      for (const id of ['c1', 'c2', 'c3']) expect(await store.create('cap', record(id))).toBeNull();
      await expect(store.create('cap', record('c4'))).rejects.toSatisfy(tooLarge);
      expect(await store.get('cap', 'c4')).toBeNull();
      expect(await store.versions('cap', 'c4')).toBeNull();
      expect((await store.ids('cap')).sort()).toEqual(['c1', 'c2', 'c3']);
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

    it('counts assistants, of one graph too, from an index; reads them by id (null for none)', async () => {
      const store = make();
      await store.create('n', record('a'));
      await store.create('n', record('b'));
      await store.create('n', record('c', { graph_id: 'h' }));
      expect([await store.count('n'), await store.count('n', 'g'), await store.count('n', 'h'), await store.count('n', 'none'), await store.count('empty')]).toEqual([3, 2, 1, 0, 0]);
      // A version of another graph moves the assistant; making an old version latest moves it back.
      expect(await store.addVersion('n', record('c', { version: 2, graph_id: 'g' }), 1)).toBe('ok');
      expect([await store.count('n', 'g'), await store.count('n', 'h')]).toEqual([3, 0]);
      expect(await store.setLatest('n', record('c', { graph_id: 'h' }), 2)).toBe('ok');
      expect([await store.count('n', 'g'), await store.count('n', 'h')]).toEqual([2, 1]);
      await store.delete('n', 'a');
      expect([await store.count('n'), await store.count('n', 'g')]).toEqual([2, 1]);
      expect((await store.ids('n')).sort()).toEqual(['b', 'c']);
      expect(await store.getMany('n', ['c', 'zz', 'b'])).toEqual([record('c', { graph_id: 'h' }), null, record('b')]);
      expect(await store.getMany('n', [])).toEqual([]);
    });

    it("keeps a tenant's assistants, every version counted, within maxTenantBytes: payload_too_large past it, nothing written", async () => {
      const { updated_at: _updated, ...first } = record('b1');
      const cost = Buffer.byteLength(JSON.stringify(record('b1'))) + Buffer.byteLength(JSON.stringify(first));
      const store = make({ maxTenantBytes: 2 * cost + 10 });
      expect(await store.create('b', record('b1'))).toBeNull();
      expect(await store.create('b', record('b2'))).toBeNull();
      expect(await store.usedBytes('b')).toBe(2 * cost);
      await expect(store.create('b', record('b3'))).rejects.toSatisfy(tooLarge);
      expect(await store.get('b', 'b3')).toBeNull();
      expect(await store.count('b')).toBe(2);
      await expect(store.addVersion('b', record('b1', { version: 2 }), 1)).rejects.toSatisfy(tooLarge);
      await expect(store.setLatest('b', record('b1', { name: 'n'.repeat(100) }), 1)).rejects.toSatisfy(tooLarge);
      expect(await store.get('b', 'b1')).toEqual({ assistant: record('b1'), versions: 1 });
      expect(await store.usedBytes('b')).toBe(2 * cost);
      // What does not grow is always allowed; another tenant is not held; a deletion frees its bytes.
      expect(await store.setLatest('b', record('b1', { name: '' }), 1)).toBe('ok');
      expect(await store.usedBytes('b')).toBe(2 * cost - 1);
      expect(await store.create('other', record('b3'))).toBeNull();
      expect(await store.delete('b', 'b2')).toBe(true);
      expect(await store.usedBytes('b')).toBe(cost - 1);
      expect(await store.addVersion('b', record('b1', { version: 2 }), 1)).toBe('ok');
      expect(await store.usedBytes('b')).toBe(cost - 1 + 1 + Buffer.byteLength(JSON.stringify({ ...first, version: 2 })));
      expect(await store.delete('b', 'b1')).toBe(true);
      expect(await store.usedBytes('b')).toBe(0);
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

assistantStoreContract('memory', (limits) => new MemoryAssistantStore({ ...LIMITS, ...limits }));
assistantStoreContract('redis', (limits) => redisAssistantStore(redis.connect(), { keyPrefix: uniquePrefix(), limits: { ...LIMITS, ...limits } }));
