import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisKeys } from '../../src/adapters/redis/keys.js';
import { call } from '../support/app.js';
import { startProcess, type AgentProcess } from '../support/processes.js';
import { startPrivateRedis, uniquePrefix, type PrivateRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/**
 * Bounded storage on a private Redis, against real API processes with the production
 * example's settings (README, "Production: sizing and retention"): growth of Redis under a
 * session that keeps adding state, one tenant's huge state against another tenant's reads,
 * and the API's memory under concurrent reads of a large history.
 */
const PRODUCTION = {
  SERVICE_SESSION_TTL: '30d',
  SERVICE_CHECKPOINTS_RETAIN: '50',
  SERVICE_MAX_STATE_BYTES: '1048576',
  SERVICE_MAX_STATE_KEYS: '65536',
  SERVICE_RATE_LIMIT: 'off',
  LOG_LEVEL: 'warn',
  SERVICE_SHUTDOWN_DELAY_MS: '0',
};

let redis: PrivateRedis;
let admin: Redis;
const processes: AgentProcess[] = [];

beforeAll(async () => {
  redis = await startPrivateRedis();
  admin = new Redis(redis.url);
});
afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop()));
  admin.disconnect();
  await redis.kill();
});

async function api(prefix: string, env: Record<string, string> = {}): Promise<AgentProcess> {
  const started = await startProcess({ entry: 'src/main/api.ts', env: { REDIS_URL: redis.url, SERVICE_KEY_PREFIX: prefix, ...PRODUCTION, ...env } });
  processes.push(started);
  return started;
}

/** A session of `agent` with its first checkpoint, through the API, its run ended (no worker: it is marked failed directly). */
async function session(url: string, headers: Record<string, string> = {}, input: Record<string, unknown> = { start: true }): Promise<string> {
  const started = await call(`${url}/api/runs`, { method: 'POST', headers, json: { agent_id: 'echo', input } });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  return started.body.session_id as string;
}

async function usedMemory(): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await admin.info('memory'))![1]);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

describe('bounded storage', () => {
  it('200 patches each adding a new 50 KB key grow Redis by less than 4 MiB: the state limit and retention hold', async () => {
    const server = await api(uniquePrefix('growth'));
    const id = await session(server.url);
    const before = await usedMemory();
    const statuses: number[] = [];
    for (let i = 0; i < 200; i += 1) {
      const patched = await call(`${server.url}/api/sessions/state?session_id=${id}`, {
        method: 'POST',
        json: { state: { [`key${i}`]: 'x'.repeat(50 * 1024) } },
      });
      statuses.push(patched.status);
    }
    const growth = (await usedMemory()) - before;
    // Patches are accepted until the state reaches 1 MiB (20 of 50 KB), then refused with 413.
    const accepted = statuses.filter((s) => s === 200).length;
    expect(accepted).toBeGreaterThanOrEqual(15);
    expect(accepted).toBeLessThanOrEqual(21);
    expect(statuses.slice(accepted).every((s) => s === 413)).toBe(true);
    expect(growth).toBeLessThan(4 * 1024 * 1024);
    const history = (await call(`${server.url}/api/sessions/history?session_id=${id}&limit=500`)).body;
    expect(history.checkpoints.length).toBeGreaterThan(0);
    expect(history.checkpoints[0].seq_num).toBe(accepted + 1);
  });

  it('a one-key patch on a 60,000-key state barely slows another tenant’s reads; 80,000 keys are refused with a 4xx', async () => {
    const prefix = uniquePrefix('big-state');
    const keys = 'k1:user:big,k2:user:other';
    const [patching, reading] = [await api(prefix, { SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: keys }), await api(prefix, { SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: keys })];
    const big = { 'X-Api-Key': 'k1' };
    const other = { 'X-Api-Key': 'k2' };
    const state = Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, i]));
    const bigSession = await session(patching.url, big, state);
    const otherRun = (await call(`${reading.url}/api/runs`, { method: 'POST', headers: other, json: { agent_id: 'echo' } })).body.run_id as string;

    // The other tenant's read, timed at Redis (its run hash, as GET /api/runs/{id} reads it): what
    // a patch could hold up is Redis. The API processes share this machine's two cores with the
    // patch loops, so a read through them would time CPU scheduling, not the store.
    const otherRunKey = new RedisKeys(prefix).run('other', otherRun);
    expect((await admin.hgetall(otherRunKey)).id).toBe(otherRun);
    const readOnce = async () => {
      const started = performance.now();
      const run = await admin.hgetall(otherRunKey);
      expect(run.id).toBe(otherRun);
      return performance.now() - started;
    };
    for (let i = 0; i < 500; i += 1) await readOnce(); // warm-up: connection, JIT
    const idle: number[] = [];
    for (let i = 0; i < 500; i += 1) idle.push(await readOnce());

    let patches = 0;
    let patching_ = true;
    const patchLoop = async (n: number) => {
      for (let i = 0; patching_; i += 1) {
        const answer = await call(`${patching.url}/api/sessions/state?session_id=${bigSession}`, {
          method: 'POST',
          headers: big,
          json: { state: { [`extra${n}`]: i } },
        });
        expect(answer.status).toBe(200);
        patches += 1;
      }
    };
    const loops = [0, 1, 2, 3].map(patchLoop);
    await waitFor('the first patches', () => patches >= 4, 60_000);
    // Read all along at least 20 more patches (and 200 reads): every read overlaps patch work.
    const busy: number[] = [];
    const until = patches + 20;
    while (busy.length < 200 || patches < until) busy.push(await readOnce());
    patching_ = false;
    await Promise.all(loops);
    const ratio = median(busy) / median(idle);
    // Before: a one-key patch re-read the whole state in one script (92-293 ms), and the other
    // tenant's median read went from 3 ms to 177 ms (59x).
    expect(ratio, `median read ${median(idle).toFixed(2)} ms idle, ${median(busy).toFixed(2)} ms during ${patches} patches`).toBeLessThan(5);
    // And through the API, the same run answers all the while.
    expect((await call(`${reading.url}/api/runs/${otherRun}`, { headers: other })).status).toBe(200);

    // 80,000 keys in one patch (short ones, so the body stays under 1 MiB): before, the script's
    // arguments overflowed the call stack (500); now the key limit refuses it and nothing is written.
    const eighty = Object.fromEntries(Array.from({ length: 80_000 }, (_, i) => [i.toString(36), 0]));
    const fresh = await session(patching.url, big);
    const refused = await call(`${patching.url}/api/sessions/state?session_id=${fresh}`, { method: 'POST', headers: big, json: { state: eighty } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/SERVICE_MAX_STATE_KEYS/);
    expect((await call(`${patching.url}/api/sessions/state?session_id=${fresh}`, { headers: big })).body.seq_num).toBe(1);
    // Growing the 60,000-key state past the byte limit is refused the same way (413).
    const more = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`more${i}`, i]));
    const tooBig = await call(`${patching.url}/api/sessions/state?session_id=${bigSession}`, { method: 'POST', headers: big, json: { state: more } });
    expect(tooBig.status).toBe(413);
    const after = (await call(`${patching.url}/api/sessions/state?session_id=${bigSession}`, { headers: big })).body;
    expect(Object.keys(after.state)).toHaveLength(60_004);
  });

  it('concurrent reads of a large history keep the API’s resident memory under 350 MB, with a 256 MB heap', async () => {
    // The heap a 512Mi container leaves Node (README, Production): reads that materialised the
    // whole history (45 MB of states per read, 4 at once) would run out of it.
    const server = await api(uniquePrefix('history'), { NODE_OPTIONS: '--max-old-space-size=256' });
    // A state near the 1 MiB limit (nine keys of 100 KB) and 50 checkpoints that each overwrite one of them.
    const initial = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`part${i}`, 'a'.repeat(100 * 1024)]));
    const id = await session(server.url, {}, initial);
    for (let i = 0; i < 60; i += 1) {
      const patched = await call(`${server.url}/api/sessions/state?session_id=${id}`, {
        method: 'POST',
        json: { state: { [`part${i % 9}`]: String.fromCharCode(98 + (i % 20)).repeat(100 * 1024) } },
      });
      expect(patched.status).toBe(200);
    }
    const rss = async () => {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      return Number(/^process_resident_memory_bytes (\S+)$/m.exec(text)![1]);
    };
    let peak = await rss();
    let pages = 0;
    let reading = true;
    const sampler = (async () => {
      while (reading) {
        peak = Math.max(peak, await rss());
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await Promise.all(
      [0, 1, 2, 3].map(async () => {
        for (let round = 0; round < 5; round += 1) {
          let offset = 0;
          for (;;) {
            const page = await call(`${server.url}/api/sessions/history?session_id=${id}&limit=500&offset=${offset}`);
            expect(page.status).toBe(200);
            pages += 1;
            offset += page.body.checkpoints.length;
            if (page.body.next_offset === undefined) break;
            expect(page.body.next_offset).toBe(offset);
          }
          expect(offset).toBe(50);
        }
      }),
    );
    reading = false;
    await sampler;
    peak = Math.max(peak, await rss());
    expect(pages).toBeGreaterThan(20);
    // The chart gives the API 512Mi; reading whole histories would exhaust the 256 MB heap first.
    expect(peak, `peak RSS ${(peak / 1048576).toFixed(0)} MB over ${pages} pages`).toBeLessThan(350 * 1024 * 1024);
  });
});
