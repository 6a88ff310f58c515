import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { admissionKeys } from '../../src/adapters/redis/keys.js';
import { loadScripts } from '../../src/adapters/redis/scripts.js';
import { runJobId } from '../../src/domain/run-jobs.js';
import type { RunJob } from '../../src/domain/types.js';
import { call } from '../support/app.js';
import { uniquePrefix, usePrivateRedis } from '../support/redis.js';
import { monitorRedis } from '../support/redis-monitor.js';
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

  it('sends a command of the backend within the turn of the event loop it is called in, not a turn later', async () => {
    const { app } = stack;
    const id = `note-${Date.now()}`;
    const key = `${app.config.SERVICE_KEY_PREFIX}:notes:${createHash('sha256').update(id).digest('base64url')}`;
    const written = app.backend.deduplicator.note(id, 'sent', 60_000);
    // The turn ends (its writes leave together, connection.ts coalesceWrites), then this
    // process's event loop is held until Redis has the value: a command that waits for a later
    // turn, or for a reply in flight (ioredis auto-pipelining), never arrives.
    await new Promise((resolve) => setImmediate(resolve));
    let seen = '';
    const deadline = Date.now() + 20_000;
    while (seen !== 'sent' && Date.now() < deadline) {
      seen = cli('GET', key);
      if (seen !== 'sent') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
    await written;
    expect(seen).toBe('sent');
  });

  /**
   * Counts the reads of runs' stored input (HGET <run> graph_input) while `work` runs; `sent`
   * tells whether a command naming the run's key (a read, or a script of its path) reached Redis.
   */
  async function inputReads(work: (readsOf: (runId: string) => number, sent: (runId: string) => boolean) => Promise<void>): Promise<void> {
    const monitor = await monitorRedis(redis.url);
    const reads = new Map<string, number>();
    const named = new Set<string>();
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source === 'lua') return;
      for (const arg of args) if (/:run:[^:]+$/.test(arg)) named.add(arg.slice(arg.lastIndexOf(':') + 1));
      if (String(args[0]).toLowerCase() !== 'hget' || args[2] !== 'graph_input') return;
      const runId = String(args[1]).slice(String(args[1]).lastIndexOf(':') + 1);
      reads.set(runId, (reads.get(runId) ?? 0) + 1);
    });
    try {
      await work(
        (runId) => reads.get(runId) ?? 0,
        (runId) => named.has(runId),
      );
    } finally {
      monitor.disconnect();
    }
  }

  const startRun = async (agent: string, wait: boolean): Promise<string> => {
    const run = await call(`${stack.app.url}/api/runs${wait ? '/wait' : ''}`, { method: 'POST', json: { agent_id: agent, input: {}, ...(wait ? { wait_ms: 30_000 } : {}) } });
    expect(run.status, JSON.stringify(run.body)).toBe(wait ? 200 : 202);
    return (wait ? run.body.id : run.body.run_id) as string;
  };

  it('reads no stored input when a run’s last step completed it (the step read the run already)', async () => {
    await inputReads(async (readsOf, sent) => {
      const runs: string[] = [];
      for (let i = 0; i < 5; i += 1) runs.push(await startRun('echo', true));
      // The reads at a run's end go out before the worker takes its next run, on the same
      // connection: once the next run's commands reached Redis, so had those reads.
      const barrier = await startRun('echo', true);
      await waitFor('the barrier run’s commands seen', () => sent(barrier));
      expect(runs.map(readsOf)).toEqual(runs.map(() => 0));
    });
  });

  it('reads an ended run’s stored input once (its webhook and its temporary session share the read)', async () => {
    await inputReads(async (readsOf, sent) => {
      const runs: string[] = [];
      for (let i = 0; i < 3; i += 1) {
        const run = await startRun('slow', false);
        const cancelled = await call(`${stack.app.url}/api/runs/${run}/cancel`, { method: 'POST' });
        expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
        runs.push(run);
      }
      // The API read them when it cancelled them; its next start goes out after, on the same connection.
      const barrier = await startRun('echo', false);
      await waitFor('the barrier run’s commands seen', () => sent(barrier));
      expect(runs.map(readsOf)).toEqual(runs.map(() => 1));
    });
  });

  it('looks up no tenant queue count before a start while the tenant is far below its cap (its last enqueue told it)', async () => {
    const monitor = await monitorRedis(redis.url);
    const looks: string[] = [];
    const named = new Set<string>();
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source === 'lua') return;
      for (const arg of args) if (/:run:[^:]+$/.test(arg)) named.add(arg.slice(arg.lastIndexOf(':') + 1));
      if (String(args[0]).toLowerCase() === 'hget' && String(args[1]).endsWith(':admission:queued')) looks.push(String(args[2]));
    });
    try {
      // The first start of the tenant reads its count (nothing seen yet); the next four go by the reply of the one before.
      for (let i = 0; i < 5; i += 1) await startRun('echo', true);
      const barrier = await startRun('echo', true);
      await waitFor('the barrier run’s commands seen', () => named.has(barrier));
      expect(looks.length).toBeLessThanOrEqual(1);
    } finally {
      monitor.disconnect();
    }
  });

  it('admits a start with no one waiting, and gives its slot back, in few commands inside Redis', async () => {
    const client = new Redis(redis.url);
    const keys = admissionKeys(uniquePrefix('admission'));
    const script = loadScripts(client);
    // The policy, and no handing (includes/admitRuns.lua): the scripts return the jobs they admit.
    const head = [keys.pending, JSON.stringify({ d: [1, 0], t: {} }), '', '', ''];
    const job: RunJob = { kind: 'start', tenant: 'light', run_id: 'run-1', session_id: 'session-1', agent_id: 'echo' };
    const monitor = await monitorRedis(redis.url);
    let inside = 0;
    const markers = new Set<string>();
    // Only this test's keys: inner commands naming them (TIME names none), and the markers it sets.
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source !== 'lua') {
        if (String(args[0]).toLowerCase() === 'set') markers.add(String(args[1]));
      } else if (args.slice(1).some((arg) => arg.startsWith(keys.pending.split(':')[0]!))) inside += 1;
    });
    /** Commands run inside Redis for `work`: MONITOR shows them in order, so all are counted once a SET after them is seen. */
    const counted = async (work: () => Promise<unknown>): Promise<number> => {
      const from = inside;
      await work();
      const marker = `${keys.pending}marker-${markers.size}`;
      await client.set(marker, '1');
      await waitFor('the marker seen', () => markers.has(marker));
      return inside - from;
    };
    try {
      // Counted too (and dropped), so its commands are all seen before the enqueue's count starts.
      await counted(() => script('admitRuns', keys.keys, [...head, 'worker-1 8', 60_000]));
      let admitted: unknown[] = [];
      const enqueue = await counted(async () => {
        admitted = await script<unknown[]>('enqueueRun', keys.keys, [...head, runJobId(job), JSON.stringify(job), 0, job.tenant, job.kind, job.agent_id, 0, 0]);
      });
      expect(admitted).toEqual([1, 0, JSON.stringify(job)]);
      const release = await counted(() => script('releaseRun', [...keys.keys, keys.handed], [...head, runJobId(job)]));
      expect(await client.hgetall(keys.keys[4]!)).toEqual({});
      // Through the whole rule (queue, ring, turn, admit) they were 25 and 9 (TIME not counted).
      expect({ enqueue, release }).toEqual({ enqueue: expect.toSatisfy((n: number) => n <= 12), release: expect.toSatisfy((n: number) => n <= 7) });
    } finally {
      monitor.disconnect();
      client.disconnect();
    }
  });
});
