import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisKeys } from '../../src/adapters/redis/keys.js';
import type { SessionListOptions } from '../../src/ports/paging.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/** Returns once the clock has moved past now: sessions created after it sort after the ones before. */
async function nextTick(): Promise<void> {
  const before = Date.now();
  await waitFor('the clock to tick', () => Date.now() > before);
}

/**
 * The sessions metadata index on both backends from the same writes (SessionListOptions.metadata):
 * a session is listed under each top-level key of its metadata holding a scalar, newest first,
 * as every write leaves it (created with or before its first run, patched, deleted, expired); on
 * Redis, sessions written before the index existed are put into it at the tenant's first read.
 */
describe.each(['memory', 'redis'] as const)('the sessions metadata index on %s', (backend) => {
  let redis: TestRedis | undefined;
  let app: TestApi;
  const prefix = uniquePrefix('metaidx');
  const T = `t-${randomUUID()}`;
  const list = async (metadata: SessionListOptions['metadata'], page = { offset: 0, limit: 50 }) =>
    (await app.backend.store.sessions.listSessions(T, { ...page, metadata })).map((session) => session.id);

  beforeAll(async () => {
    if (backend === 'redis') redis = await startRedis();
    app = await startTestApi({ ...(redis ? { redisUrl: redis.url } : {}), env: { SERVICE_KEY_PREFIX: prefix } });
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await redis?.stop();
  });

  it('lists the sessions holding a key with a scalar value, newest first, as creations, runs, patches and deletions leave them', async () => {
    const { store } = app.backend;
    const user = `user-${randomUUID()}`;
    const a = randomUUID();
    const b = randomUUID();
    const c = randomUUID();
    await store.sessions.createSession(T, { session_id: a, metadata: { user, n: 1, ok: true, none: null, tags: ['x'], deep: { user } } });
    await nextTick();
    // A session created by its first run, with its metadata.
    await store.runs.createRun(T, { run_id: randomUUID(), session_id: b, agent_id: 'echo', metadata: { user, n: 2.5, text: 'é "q" \\ /' }, start: { node_id: 'receive', input: {} } });
    await nextTick();
    await store.sessions.createSession(T, { session_id: c, metadata: { user: `${user}-other`, n: 1 } });

    expect(await list({ key: 'user', value: user })).toEqual([b, a]);
    expect(await list({ key: 'user', value: user }, { offset: 1, limit: 1 })).toEqual([a]);
    expect(await list({ key: 'n', value: 1 })).toEqual([c, a]);
    expect(await list({ key: 'n', value: 2.5 })).toEqual([b]);
    expect(await list({ key: 'ok', value: true })).toEqual([a]);
    expect(await list({ key: 'none', value: null })).toEqual([a]);
    expect(await list({ key: 'text', value: 'é "q" \\ /' })).toEqual([b]);
    // Other types and values are other pairs; objects and arrays are not indexed.
    expect(await list({ key: 'n', value: '1' })).toEqual([]);
    expect(await list({ key: 'ok', value: 'true' })).toEqual([]);
    expect(await list({ key: 'tags', value: 'x' })).toEqual([]);

    // A patch moves the session: a changed value, a removed key, a scalar that becomes an object.
    await store.sessions.updateSessionMetadata(T, a, { user: `${user}-other`, n: null, ok: { nested: true } });
    expect(await list({ key: 'user', value: user })).toEqual([b]);
    expect(await list({ key: 'user', value: `${user}-other` })).toEqual([c, a]);
    expect(await list({ key: 'n', value: 1 })).toEqual([c]);
    expect(await list({ key: 'ok', value: true })).toEqual([]);
    await store.sessions.updateSessionMetadata(T, a, { ok: false });
    expect(await list({ key: 'ok', value: false })).toEqual([a]);

    await store.sessions.deleteSession(T, c);
    expect(await list({ key: 'user', value: `${user}-other` })).toEqual([a]);
    expect(await list({ key: 'n', value: 1 })).toEqual([]);
    // Expiry removes a session as a deletion does.
    expect(await store.sessions.expireSessions(Date.now() + 60_000, 100)).toBeGreaterThanOrEqual(1);
    expect(await list({ key: 'user', value: `${user}-other` })).toEqual([]);
    expect(await list({ key: 'ok', value: false })).toEqual([]);
    if (redis) {
      // Nothing of the index is left behind by the sessions gone (a listing skips ids whose hash is gone).
      const client = new Redis(redis.url);
      try {
        const members: string[] = [];
        for (const key of await client.keys(`${new RedisKeys(prefix).sessions(T).replace(/[{}]/g, (ch) => `\\${ch}`)}:meta:*`)) members.push(...(await client.zrange(key, '0', '-1')));
        expect(members.filter((id) => id === a || id === c)).toEqual([]);
      } finally {
        client.disconnect();
      }
    }
  });

  it('bounds what one session puts in the index: past 32 indexable pairs it is in the overflow list alone; a pair over 256 bytes is not indexed', async () => {
    const { store } = app.backend;
    const many = randomUUID();
    const wide = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i]));
    await store.sessions.createSession(T, { session_id: many, metadata: { ...wide, obj: { a: 1 } } });
    const overflow = async () => (await app.backend.store.sessions.listSessions(T, { offset: 0, limit: 50, metadataOverflow: true })).map((s) => s.id);
    expect(await list({ key: 'k1', value: 1 })).toEqual([]);
    expect(await overflow()).toEqual([many]);
    // Down to 32 pairs: under each pair again, out of the overflow list.
    await store.sessions.updateSessionMetadata(T, many, Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`k${32 + i}`, null])));
    expect(await list({ key: 'k1', value: 1 })).toEqual([many]);
    expect(await list({ key: 'k31', value: 31 })).toEqual([many]);
    expect(await overflow()).toEqual([]);
    // Over again by one key.
    await store.sessions.updateSessionMetadata(T, many, { extra: 'x' });
    expect(await list({ key: 'k1', value: 1 })).toEqual([]);
    expect(await overflow()).toEqual([many]);

    const long = randomUUID();
    const text = 'é'.repeat(130);
    await store.sessions.createSession(T, { session_id: long, metadata: { text, short: 'yes' } });
    expect(await list({ key: 'text', value: text })).toEqual([]);
    expect(await list({ key: 'short', value: 'yes' })).toEqual([long]);
    await store.sessions.deleteSession(T, many);
    await store.sessions.deleteSession(T, long);
    expect(await overflow()).toEqual([]);
    expect(await list({ key: 'short', value: 'yes' })).toEqual([]);
  });

  it.runIf(backend === 'redis')('puts the sessions written before the index into it at the tenant\'s first read, once', async () => {
    const tenant = `old-${randomUUID()}`;
    const { store } = app.backend;
    const ids: string[] = [];
    // More than a page of the walk (200), some created in the same millisecond.
    for (let i = 0; i < 230; i += 1) {
      const id = `s-${String(i).padStart(3, '0')}-${randomUUID()}`;
      await store.sessions.createSession(tenant, { session_id: id, metadata: { group: i % 2 === 0 ? 'even' : 'odd', i } });
      ids.push(id);
    }
    // As an older version left them: no index sets, no marker. Two created_at scores only, so
    // the walk's first page (200) ends inside a millisecond whose sessions go on past it.
    const keys = new RedisKeys(prefix);
    const client = new Redis(redis!.url);
    try {
      const first = Number(await client.zscore(keys.sessions(tenant), ids[0]!));
      for (const [i, id] of ids.entries()) await client.zadd(keys.sessions(tenant), 'XX', i < 115 ? first : first + 1, id);
      const indexKeys = await client.keys(`${keys.sessions(tenant).replace(/[{}]/g, (ch) => `\\${ch}`)}:meta*`);
      expect(indexKeys.length).toBeGreaterThan(200);
      await client.del(...indexKeys);
      const again = await app.backend.store.sessions.listSessions(tenant, { offset: 0, limit: 500, metadata: { key: 'group', value: 'even' } });
      const created = async (id: string) => Number(await client.zscore(keys.sessions(tenant), id));
      const even = ids.filter((_, i) => i % 2 === 0);
      expect(new Set(again.map((s) => s.id))).toEqual(new Set(even));
      // Newest first.
      const scores = await Promise.all(again.map((s) => created(s.id)));
      expect([...scores].sort((x, y) => y - x)).toEqual(scores);
      expect(await client.get(keys.sessionsMetadataIndexed(tenant))).toBe('1');
      expect((await store.sessions.listSessions(tenant, { offset: 0, limit: 5, metadata: { key: 'i', value: 229 } })).map((s) => s.id)).toEqual([ids[229]]);
    } finally {
      client.disconnect();
    }
  });
});
