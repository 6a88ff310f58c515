import { DEFAULT_STORAGE_LIMITS } from '../../src/domain/types.js';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/app.js';
import { startCluster, type Cluster } from '../support/cluster.js';
import type { AgentProcess } from '../support/processes.js';
import { watch, type Received } from '../support/sse.js';
import { waitFor } from '../support/wait.js';

/**
 * Faults against real processes: Redis killed and restarted (it keeps acknowledged writes
 * in an fsynced append-only file, like a production Redis), workers and an API killed with
 * SIGKILL. Invariants: no acknowledged write lost, seq_nums consecutive, every started run
 * ends, readiness tells the truth, processes recover without a restart.
 */
let cluster: Cluster;

// Three processes and more, each compiling the sources with tsx: minutes on a loaded 2-core machine.
beforeAll(async () => {
  // A slow node of 3 s: long enough to see it start and kill its worker while it runs.
  cluster = await startCluster({ apis: 2, workers: 2, persistRedis: true, env: { SLOW_NODE_MS: '3000' } });
}, 300_000);
afterAll(async () => {
  await cluster?.stop();
}, 120_000);

async function readiness(process: AgentProcess): Promise<number> {
  try {
    return (await fetch(`${process.url}/health/ready`, { signal: AbortSignal.timeout(3000) })).status;
  } catch {
    return 0;
  }
}

async function expectEveryRunEnds(runIds: string[], timeoutMs = 60_000): Promise<void> {
  await waitFor(
    'every run to end',
    async () => {
      const runs = await Promise.all(runIds.map((id) => call(`${cluster.url}/api/runs/${id}`)));
      return runs.every((r) => r.status === 200 && ['completed', 'failed', 'interrupted'].includes(r.body.status));
    },
    timeoutMs,
    200,
  );
}

async function expectConsecutiveHistory(sessionId: string): Promise<void> {
  const history = (await call(`${cluster.url}/api/sessions/history?session_id=${sessionId}&limit=500`)).body.checkpoints;
  const seqs = history.map((c: { seq_num: number }) => c.seq_num).reverse();
  // No gap up to the latest; history keeps the newest SERVICE_CHECKPOINTS_RETAIN of them.
  expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => seqs[0] + i));
  expect(seqs.length).toBe(Math.min(seqs.at(-1), DEFAULT_STORAGE_LIMITS.checkpointsRetain));
}

async function startRuns(count: number, agent: string): Promise<{ run_id: string; session_id: string }[]> {
  const tickets = [];
  for (let i = 0; i < count; i += 1) {
    const response = await call(`${cluster.url}/api/runs`, { method: 'POST', json: { agent_id: agent, input: { i } } });
    expect(response.status).toBe(202);
    tickets.push(response.body);
  }
  return tickets;
}

describe('chaos', () => {
  it('Redis killed and restarted during runs and streams: readiness tells the truth, everything recovers, nothing is lost', async () => {
    const stream = watch(`${cluster.url}/api/events/stream`);
    await stream.waitForOpen();
    const tickets = await startRuns(6, 'slow');
    await stream.waitForEvent((e) => e.event.type === 'node_start' && e.event.node === 'crawl');
    const processes = [...cluster.apis, ...cluster.workers];
    const pids = processes.map((p) => p.pid);

    await cluster.redis.kill();
    await waitFor('every process to report not ready', async () => (await Promise.all(processes.map(readiness))).every((s) => s === 503), 10_000);
    const during = await call(`${cluster.url}/api/sessions?limit=1`);
    expect(during.status).toBe(503);
    expect(during.body.error.code).toBe('unavailable');

    await cluster.redis.restart();
    await waitFor('every process to be ready again', async () => (await Promise.all(processes.map(readiness))).every((s) => s === 200), 20_000);
    expect(processes.map((p) => p.pid)).toEqual(pids);

    await expectEveryRunEnds(tickets.map((t) => t.run_id));
    for (const ticket of tickets) {
      expect((await call(`${cluster.url}/api/runs/${ticket.run_id}`)).body.status).toBe('completed');
      await expectConsecutiveHistory(ticket.session_id);
    }
    const after = await startRuns(1, 'echo');
    await stream.waitForEvent((e) => e.event.session === after[0]!.session_id && e.event.type === 'completed', 30_000);

    const redis = new Redis(cluster.redis.url);
    try {
      const keys = await redis.keys('*:{DefaultTenant}:events');
      const stored = (await redis.xrange(keys[0]!, '-', '+')).map(([id]) => id);
      const sessions = new Set([...tickets, ...after].map((t) => t.session_id));
      const storedForSessions = (await redis.xrange(keys[0]!, '-', '+'))
        .filter(([, fields]) => sessions.has(JSON.parse(fields[1]!).session))
        .map(([id]) => id);
      const received = new Set(stream.received.map((e) => e.id));
      expect(stored.length).toBeGreaterThan(0);
      expect(storedForSessions.filter((id) => !received.has(id))).toEqual([]);
    } finally {
      redis.disconnect();
      stream.close();
    }
  });

  it('Redis down across a schedule tick: the tick fires once, late, after Redis is back', async () => {
    const created = await call(`${cluster.url}/api/schedules`, {
      method: 'POST',
      json: { agent_id: 'echo', cron_expr: '* * * * *', new_session: true },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    // The first tick at least 5 s away, so the outage brackets it with a margin on both sides.
    const tick = Math.ceil((Date.now() + 5_000) / 60_000) * 60_000;
    await waitFor('two seconds before the tick', () => Date.now() >= tick - 2_000, 70_000, 50);
    await cluster.redis.kill();
    await waitFor('three seconds after the tick', () => Date.now() >= tick + 3_000, 10_000, 50);
    await cluster.redis.restart();
    const due = new Date(tick).toISOString();
    const record = await waitFor(
      'the late fire of the tick to complete',
      async () => {
        const history = (await call(`${cluster.url}/api/schedules/${id}/history`)).body.history as Record<string, string>[];
        return history.find((h) => h.due_at === due && h.status === 'completed');
      },
      40_000,
      200,
    );
    expect(Date.parse(record.fired_at!)).toBeGreaterThanOrEqual(tick + 3_000);
    const history = (await call(`${cluster.url}/api/schedules/${id}/history`)).body.history as Record<string, string>[];
    expect(history.filter((h) => h.due_at === due)).toHaveLength(1);
    expect((await call(`${cluster.url}/api/runs/${record.run_id}`)).body.status).toBe('completed');
    expect((await call(`${cluster.url}/api/schedules/${id}`, { method: 'DELETE' })).status).toBe(200);
    // Up to 65 s to the tick, 5 s of outage, up to 40 s for the late fire: past the default 60 s.
  }, 130_000);

  it('workers killed with SIGKILL while they execute a node: another worker takes each run over, every run completes with consecutive checkpoints', async () => {
    const stream = watch(`${cluster.url}/api/events/stream`);
    await stream.waitForOpen();
    const startedOn = (worker: AgentProcess, runId: string) => worker.lines.some((l) => l.json?.msg === 'run job started' && l.json.run_id === runId);
    const kills: { victim: AgentProcess; runId: string }[] = [];
    try {
      const tickets = await startRuns(8, 'slow');
      const ours = new Set(tickets.map((t) => t.run_id));
      for (let round = 0; round < 3; round += 1) {
        // Fresh runs each round after the first: the earlier ones may all have ended while a
        // worker restarted, and a round needs a slow node under way.
        if (round > 0) {
          const fresh = await startRuns(3, 'slow');
          tickets.push(...fresh);
          for (const t of fresh) ours.add(t.run_id);
        }
        // A run whose slow node has started and not ended, its job held by a live worker: that
        // worker is killed in the middle of the node, every round (not after a sleep that hopes).
        const target = await waitFor(
          'a slow node under way on a live worker',
          () => {
            const last = new Map<string, Received>();
            for (const e of stream.received) if (ours.has(e.event.run_id)) last.set(e.event.run_id, e);
            for (const [runId, e] of last) {
              if (e.event.type !== 'node_start' || e.event.node !== 'crawl') continue;
              const victim = cluster.workers.find((w) => startedOn(w, runId));
              if (victim) return { victim, runId };
            }
            return undefined;
          },
          60_000,
        );
        target.victim.signal('SIGKILL');
        await target.victim.exited;
        kills.push(target);
        cluster.workers.splice(cluster.workers.indexOf(target.victim), 1);
        await cluster.startWorker();
      }
      await expectEveryRunEnds(tickets.map((t) => t.run_id), 90_000);
      for (const ticket of tickets) {
        expect((await call(`${cluster.url}/api/runs/${ticket.run_id}`)).body.status).toBe('completed');
        await expectConsecutiveHistory(ticket.session_id);
      }
      // Each killed job was taken over: another worker started it after the kill.
      const everyWorker = [...cluster.workers, ...kills.map((k) => k.victim)];
      for (const { victim, runId } of kills) expect(everyWorker.some((w) => w !== victim && startedOn(w, runId)), runId).toBe(true);
    } finally {
      stream.close();
    }
    // Three worker starts (tsx compiles the sources each time) and three takeovers.
  }, 300_000);

  it('an API killed with SIGKILL mid-request loses no acknowledged patch', async () => {
    const [ticket] = await startRuns(1, 'echo');
    await expectEveryRunEnds([ticket!.run_id]);
    const target = cluster.apis[0]!;
    const acknowledged: string[] = [];
    const patches = Array.from({ length: 60 }, (_, i) =>
      call(`${target.url}/api/sessions/state?session_id=${ticket!.session_id}`, { method: 'POST', json: { state: { [`k${i}`]: i } } })
        .then((r) => {
          if (r.status === 200) acknowledged.push(`k${i}`);
        })
        .catch(() => undefined),
    );
    await waitFor('some patches acknowledged', () => acknowledged.length >= 5, 10_000, 1);
    target.signal('SIGKILL');
    await Promise.all(patches);
    await target.exited;
    await cluster.restartApi(0);
    const state = (await call(`${cluster.url}/api/sessions/state?session_id=${ticket!.session_id}`)).body;
    for (const key of acknowledged) expect(state.state).toHaveProperty(key);
    await expectConsecutiveHistory(ticket!.session_id);
    expect(state.seq_num).toBeGreaterThanOrEqual(3 + acknowledged.length);
    expect((await call(`${cluster.url}/api/sessions?limit=1`)).status).toBe(200);
  });
});
