import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { GraphItemStore } from '../../src/ports/graph-storage.js';
import { AgentplaneStore } from '../../src/langgraph/item-store.js';

/** Builds storage whose tenants may hold `maxTenantBytes` of items, and a clock the test moves. */
export type ItemStorageFactory = (options: { maxTenantBytes: number; clock: () => number }) => Promise<GraphItemStore>;

/**
 * The LangGraph `BaseStore` on our storage, the same on both adapters: namespaces, get/put/
 * delete, search by prefix and filter with paging, listNamespaces, tenant scope, byte cap.
 */
export function graphStoreContract(name: string, factory: ItemStorageFactory): void {
  describe(`LangGraph store (${name})`, () => {
    let now = 1_000;
    const setup = async (maxTenantBytes = 1_000_000) => {
      const storage = await factory({ maxTenantBytes, clock: () => now });
      const tenant = `t-${randomUUID()}`;
      return { storage, tenant, store: new AgentplaneStore({ tenant, storage }) };
    };

    it('puts, gets, replaces (keeping createdAt) and deletes items', async () => {
      const { store } = await setup();
      expect(await store.get(['users', 'u1'], 'prefs')).toBeNull();
      now = 2_000;
      await store.put(['users', 'u1'], 'prefs', { theme: 'dark', tags: ['a'] });
      now = 3_000;
      await store.put(['users', 'u1'], 'prefs', { theme: 'light', tags: ['b'] });
      const item = await store.get(['users', 'u1'], 'prefs');
      expect(item).toEqual({
        namespace: ['users', 'u1'],
        key: 'prefs',
        value: { theme: 'light', tags: ['b'] },
        createdAt: new Date(2_000),
        updatedAt: new Date(3_000),
      });
      await store.delete(['users', 'u1'], 'prefs');
      expect(await store.get(['users', 'u1'], 'prefs')).toBeNull();
      await store.delete(['users', 'u1'], 'prefs');
    });

    it('searches by namespace prefix (label by label) and filter, in order, with offset and limit', async () => {
      const { store } = await setup();
      await store.put(['docs', 'a'], 'k2', { kind: 'note', n: 2 });
      await store.put(['docs', 'a'], 'k1', { kind: 'note', n: 1 });
      await store.put(['docs', 'a', 'deep'], 'k3', { kind: 'todo', n: 3, meta: { x: 1 } });
      await store.put(['docs', 'ab'], 'k4', { kind: 'note', n: 4 });
      await store.put(['other'], 'k5', { kind: 'note', n: 5 });
      const keys = (items: { key: string }[]) => items.map((i) => i.key);
      expect(keys(await store.search(['docs', 'a']))).toEqual(['k2', 'k1', 'k3']);
      expect(keys(await store.search(['docs']))).toEqual(['k2', 'k1', 'k3', 'k4']);
      expect(keys(await store.search([], { limit: 100 }))).toEqual(['k2', 'k1', 'k3', 'k4', 'k5']);
      expect(keys(await store.search(['docs'], { filter: { kind: 'note' } }))).toEqual(['k2', 'k1', 'k4']);
      expect(keys(await store.search(['docs'], { filter: { n: { $gte: 2, $lt: 4 } } }))).toEqual(['k2', 'k3']);
      expect(keys(await store.search(['docs'], { filter: { n: { $in: [1, 4] } } }))).toEqual(['k1', 'k4']);
      expect(keys(await store.search(['docs'], { filter: { kind: { $ne: 'note' } } }))).toEqual(['k3']);
      expect(keys(await store.search(['docs'], { filter: { meta: { x: 1 } } }))).toEqual(['k3']);
      expect(keys(await store.search(['docs'], { offset: 1, limit: 2 }))).toEqual(['k1', 'k3']);
      expect(keys(await store.search(['nothing']))).toEqual([]);
    });

    it('searches in insertion order within a namespace (a replaced item keeps its place), namespaces in order', async () => {
      const { store, storage, tenant } = await setup();
      for (const key of ['m-c', 'm-a', 'm-d', 'm-b']) await store.put(['memories', 'u1'], key, { key });
      await store.put(['memories', 'u0'], 'z', { key: 'z' });
      await store.put(['memories', 'u1'], 'm-a', { key: 'm-a', again: true });
      await store.delete(['memories', 'u1'], 'm-d');
      await store.put(['memories', 'u1'], 'm-d', { key: 'm-d' });
      const keys = (items: { key: string }[]) => items.map((i) => i.key);
      expect(keys(await store.search(['memories', 'u1']))).toEqual(['m-c', 'm-a', 'm-b', 'm-d']);
      expect(keys(await store.search(['memories', 'u1'], { offset: 1, limit: 2 }))).toEqual(['m-a', 'm-b']);
      expect(keys(await store.search(['memories']))).toEqual(['z', 'm-c', 'm-a', 'm-b', 'm-d']);
      // Page by page from the storage, across namespaces, the same order.
      const paged: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await storage.scanItems(tenant, ['memories'], cursor, 2);
        paged.push(...keys(page.items));
        cursor = page.next;
      } while (cursor !== undefined);
      expect(paged).toEqual(['z', 'm-c', 'm-a', 'm-b', 'm-d']);
    });

    it('searches past one storage page', async () => {
      const { store } = await setup();
      for (let i = 0; i < 450; i += 1) await store.put(['bulk'], `k${String(i).padStart(3, '0')}`, { even: i % 2 === 0 });
      const found = await store.search(['bulk'], { filter: { even: false }, offset: 200, limit: 100 });
      expect(found.map((i) => i.key)).toEqual(Array.from({ length: 25 }, (_, i) => `k${String(401 + 2 * i).padStart(3, '0')}`));
    });

    it('lists namespaces by prefix, suffix, wildcard and depth, with paging', async () => {
      const { store } = await setup();
      await store.put(['a', 'b', 'c'], 'k', { v: 1 });
      await store.put(['a', 'b', 'd'], 'k', { v: 1 });
      await store.put(['a', 'x', 'c'], 'k', { v: 1 });
      await store.put(['z'], 'k', { v: 1 });
      await store.put(['z'], 'k2', { v: 1 });
      expect(await store.listNamespaces()).toEqual([['a', 'b', 'c'], ['a', 'b', 'd'], ['a', 'x', 'c'], ['z']]);
      expect(await store.listNamespaces({ prefix: ['a', 'b'] })).toEqual([['a', 'b', 'c'], ['a', 'b', 'd']]);
      expect(await store.listNamespaces({ suffix: ['c'] })).toEqual([['a', 'b', 'c'], ['a', 'x', 'c']]);
      expect(await store.listNamespaces({ prefix: ['a', '*', 'c'] })).toEqual([['a', 'b', 'c'], ['a', 'x', 'c']]);
      expect(await store.listNamespaces({ maxDepth: 2 })).toEqual([['a', 'b'], ['a', 'x'], ['z']]);
      expect(await store.listNamespaces({ offset: 1, limit: 2 })).toEqual([['a', 'b', 'd'], ['a', 'x', 'c']]);
      await store.delete(['z'], 'k');
      expect(await store.listNamespaces({ prefix: ['z'] })).toEqual([['z']]);
      await store.delete(['z'], 'k2');
      expect(await store.listNamespaces({ prefix: ['z'] })).toEqual([]);
    });

    it('answers a batch reads before its writes', async () => {
      const { store } = await setup();
      const [put, read] = await store.batch([
        { namespace: ['n'], key: 'k', value: { v: 1 } },
        { namespace: ['n'], key: 'k' },
      ]);
      expect(put).toBeUndefined();
      expect(read).toBeNull();
      expect((await store.get(['n'], 'k'))?.value).toEqual({ v: 1 });
    });

    it('refuses bad namespaces and values, writing nothing', async () => {
      const { store, storage, tenant } = await setup();
      await expect(store.put(['a.b'], 'k', { v: 1 })).rejects.toThrow(/periods/);
      await expect(store.put([], 'k', { v: 1 })).rejects.toThrow(/empty/);
      await expect(store.put(['n'], 'k', [1] as unknown as Record<string, unknown>)).rejects.toMatchObject({ code: 'bad_request' });
      expect(await storage.usedBytes(tenant)).toBe(0);
    });

    it('scopes items to the tenant', async () => {
      const { storage, store } = await setup();
      const other = new AgentplaneStore({ tenant: `t-${randomUUID()}`, storage });
      await store.put(['shared'], 'k', { owner: 'one' });
      expect(await other.get(['shared'], 'k')).toBeNull();
      expect(await other.search(['shared'])).toEqual([]);
      expect(await other.listNamespaces()).toEqual([]);
      await other.delete(['shared'], 'k');
      expect((await store.get(['shared'], 'k'))?.value).toEqual({ owner: 'one' });
    });

    it('holds a tenant to its byte cap: 413 past it, nothing written; replacing and deleting give bytes back', async () => {
      const { store, storage, tenant } = await setup(300);
      await store.put(['n'], 'a', { text: 'x'.repeat(100) });
      const afterOne = await storage.usedBytes(tenant);
      expect(afterOne).toBeGreaterThan(100);
      await store.put(['n'], 'b', { text: 'y'.repeat(100) });
      const afterTwo = await storage.usedBytes(tenant);
      await expect(store.put(['n'], 'c', { text: 'z'.repeat(100) })).rejects.toMatchObject({ code: 'payload_too_large' });
      expect(await store.get(['n'], 'c')).toBeNull();
      expect(await storage.usedBytes(tenant)).toBe(afterTwo);
      // Growing an item past the cap fails too; shrinking one always works.
      await expect(store.put(['n'], 'a', { text: 'x'.repeat(200) })).rejects.toMatchObject({ code: 'payload_too_large' });
      expect((await store.get(['n'], 'a'))?.value).toEqual({ text: 'x'.repeat(100) });
      await store.put(['n'], 'a', { text: 'short' });
      await store.put(['n'], 'c', { text: 'z'.repeat(100) });
      await store.delete(['n'], 'a');
      await store.delete(['n'], 'b');
      await store.delete(['n'], 'c');
      expect(await storage.usedBytes(tenant)).toBe(0);
    });
  });
}
