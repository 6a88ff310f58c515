import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { call } from '../support/app.js';
import { usePrivateRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { useApiWithWorkers } from '../support/workers.js';

/**
 * What a run costs on Redis at light load, where nothing is batched: each command of the run
 * path is a round trip of its own. The light-load rows of `npm run bench:runs` (1 and 8
 * clients) give the CPU it costs; these tests pin the causes found behind a regression there.
 */
describe('Redis round trips at light load', () => {
  const redis = usePrivateRedis();
  const stack = useApiWithWorkers(() => redis.url, { workers: 1 });

  /** Runs `redis-cli` against the private server now, without a turn of this process's event loop. */
  const cli = (...args: string[]) => spawnSync('redis-cli', ['-p', String(redis.port), ...args], { encoding: 'utf8' }).stdout.trim();

  it('sends a command of the backend when it is called, not at a later turn of the event loop (no auto-pipelining)', async () => {
    const { app } = stack;
    const id = `note-${Date.now()}`;
    const key = `${app.config.SERVICE_KEY_PREFIX}:notes:${createHash('sha256').update(id).digest('base64url')}`;
    const written = app.backend.deduplicator.note(id, 'sent', 60_000);
    // This process's event loop is held until Redis has the value: a command that waits for a
    // later turn (ioredis auto-pipelining defers the write to setImmediate) never arrives.
    let seen = '';
    const deadline = Date.now() + 20_000;
    while (seen !== 'sent' && Date.now() < deadline) {
      seen = cli('GET', key);
      if (seen !== 'sent') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
    await written;
    expect(seen).toBe('sent');
  });

  it('reads an ended run’s stored input once (its webhook and its temporary session ask the same read)', async () => {
    const { app } = stack;
    const monitor = await new Redis(redis.url).monitor();
    const reads = new Map<string, number>();
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source === 'lua' || String(args[0]).toLowerCase() !== 'hget' || args[2] !== 'graph_input') return;
      reads.set(String(args[1]), (reads.get(String(args[1])) ?? 0) + 1);
    });
    const readsOf = (runId: string) => [...reads].find(([key]) => key.endsWith(`:${runId}`))?.[1] ?? 0;
    try {
      const runs: string[] = [];
      // The last run is a barrier: the worker ends every run on one connection, so once its
      // input is read, every read of the runs before it has reached Redis.
      for (let i = 0; i < 6; i += 1) {
        const run = await call(`${app.url}/api/runs/wait`, { method: 'POST', json: { agent_id: 'echo', input: { n: i }, wait_ms: 30_000 } });
        expect(run.status, JSON.stringify(run.body)).toBe(200);
        expect(run.body.status).toBe('completed');
        runs.push(run.body.id as string);
      }
      const barrier = runs.pop()!;
      await waitFor('the last run’s input read', () => readsOf(barrier) > 0);
      expect(runs.map(readsOf)).toEqual(runs.map(() => 1));
    } finally {
      monitor.disconnect();
    }
  });
});
