import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisKeys } from '../../src/adapters/redis/keys.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/** Returns once the clock has moved past now: sessions created after it sort after the ones before. */
async function nextTick(): Promise<void> {
  const before = Date.now();
  await waitFor('the clock to tick', () => Date.now() > before);
}

/**
 * Store.listThreadRows (a thread list's one read) on both backends from the same writes: the
 * sessions newest first with their metadata and state as JSON texts and what their latest run
 * and checkpoint say; on Redis, a session written before the session hash kept its latest
 * checkpoint's time reads the same through its history entry.
 */
const T = 'DefaultTenant';

describe.each(['memory', 'redis'] as const)('Store.listThreadRows on %s', (backend) => {
  let redis: TestRedis | undefined;
  let app: TestApi;
  const prefix = uniquePrefix('rows');
  const ids: string[] = [];

  beforeAll(async () => {
    if (backend === 'redis') redis = await startRedis();
    app = await startTestApi({ ...(redis ? { redisUrl: redis.url } : {}), env: { SERVICE_KEY_PREFIX: prefix } });
    const { store } = app.backend;
    // Oldest first: a session without a run, one with metadata and a run, one whose run failed.
    const bare = randomUUID();
    await store.sessions.createSession(T, { session_id: bare, metadata: { n: 0 } });
    ids.unshift(bare);
    for (let i = 1; i <= 2; i += 1) {
      await nextTick();
      const id = randomUUID();
      await store.sessions.createSession(T, { session_id: id, metadata: { n: i, text: 'é "q"' } });
      const run = await store.runs.createRun(T, { run_id: randomUUID(), session_id: id, agent_id: 'echo', start: { node_id: 'receive', input: { message: `m${i}`, list: [1, { deep: null }] } } });
      if (i === 2) await store.runs.updateRun(T, run.id, { status: 'failed', error: 'boom "quoted" é' } as never);
      ids.unshift(id);
    }
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await redis?.stop();
  });

  it('answers each session with its metadata, latest run and checkpoint (state as JSON text), newest first, paged', async () => {
    const rows = await app.backend.store.listThreadRows(T, { offset: 0, limit: 10 }, 1024 * 1024);
    expect(rows.map((row) => row.id)).toEqual(ids);
    const [failed, done, bare] = rows;
    expect(JSON.parse(bare!.metadata)).toEqual({ n: 0 });
    expect(bare).toMatchObject({ agent_id: '', run: null, checkpoint: null });
    expect(JSON.parse(done!.metadata)).toEqual({ n: 1, text: 'é "q"' });
    expect(done!.run).toMatchObject({ status: 'queued' });
    expect(done!.checkpoint).toMatchObject({ seq_num: 1, node_id: 'receive' });
    expect(JSON.parse(done!.checkpoint!.state)).toEqual({ message: 'm1', list: [1, { deep: null }] });
    const latest = await app.backend.store.sessions.getCheckpoint(T, done!.id);
    expect(done!.checkpoint!.created_at).toBe(latest!.created_at);
    expect(failed!.run).toMatchObject({ status: 'failed', error: 'boom "quoted" é' });
    expect((await app.backend.store.listThreadRows(T, { offset: 1, limit: 1 }, 1024 * 1024)).map((row) => row.id)).toEqual([ids[1]]);
    expect(await app.backend.store.listThreadRows(T, { offset: 3, limit: 5 }, 1024 * 1024)).toEqual([]);
  });

  it('answers a large state (more keys than one script reads) whole, read on its own', async () => {
    const { store } = app.backend;
    await nextTick();
    const id = randomUUID();
    const input = Object.fromEntries(Array.from({ length: 2_100 }, (_, i) => [`k${i}`, i]));
    await store.runs.createRun(T, { run_id: randomUUID(), session_id: id, agent_id: 'echo', start: { node_id: 'receive', input } });
    const [row] = await store.listThreadRows(T, { offset: 0, limit: 1 }, 1024 * 1024);
    expect(row!.id).toBe(id);
    expect(row!.checkpoint).toMatchObject({ seq_num: 1, node_id: 'receive' });
    expect(JSON.parse(row!.checkpoint!.state)).toEqual(input);
    ids.unshift(id);
  });

  it.runIf(backend === 'redis')('reads a session written before the session hash kept checkpoint_at through its history entry, the same', async () => {
    const before = await app.backend.store.listThreadRows(T, { offset: 0, limit: 10 }, 1024 * 1024);
    const client = new Redis(redis!.url);
    try {
      const keys = new RedisKeys(prefix);
      for (const id of ids) await client.hdel(keys.session(T, id), 'checkpoint_at', 'node_id');
      expect(await client.hexists(keys.session(T, ids[0]!), 'checkpoint_at')).toBe(0);
    } finally {
      client.disconnect();
    }
    expect(await app.backend.store.listThreadRows(T, { offset: 0, limit: 10 }, 1024 * 1024)).toEqual(before);
  });
});
