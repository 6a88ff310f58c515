import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import agents from '../fixtures/agents.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import type { AgentProcess } from '../support/processes.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { startRunWorker } from './backends.js';
import { runScenarios, sessionEvents, startRun, waitRun } from './scenarios.js';

/** Every item of a list read (a page larger than any test writes). */
const ALL = { limit: 10_000, offset: 0 };
const T = 'DefaultTenant';
let redis: PrivateRedis;
let app: TestApi;

const startWorker = (extra: Record<string, string> = {}): Promise<AgentProcess> => startRunWorker(redis.url, app, extra);

/** A worker with `extra`, and a run of `slow` (with `input`) once its slow node (`crawl`) has started. */
async function slowRunUnder(extra: Record<string, string>, input?: Record<string, unknown>) {
  const worker = await startWorker(extra);
  const h = { url: app.url, store: app.backend.store, events: app.backend.events };
  const { run_id, session_id } = await startRun(h, { agent_id: 'slow', ...(input ? { input } : {}) });
  await waitFor('the slow node to start', async () =>
    (await sessionEvents(h, session_id)).some((e) => e.type === 'node_start' && e.node === 'crawl'),
  );
  return { worker, h, run_id, session_id };
}

beforeAll(async () => {
  redis = await startPrivateRedis();
  app = await startTestApi({ redisUrl: redis.url, agents: new AgentRegistry(agents) });
});
afterAll(async () => {
  await app.close();
  await redis.stop();
});

describe('with two worker processes', () => {
  let workers: AgentProcess[] = [];
  beforeAll(async () => {
    workers = await Promise.all([startWorker(), startWorker()]);
  });
  afterAll(async () => {
    const codes = await Promise.all(workers.map((w) => w.stop()));
    expect(codes).toEqual([0, 0]);
  });

  runScenarios('Redis, API → BullMQ → worker processes', () => ({ url: app.url, store: app.backend.store, events: app.backend.events }));

  it('serves metrics and probes on WORKER_PORT, counting runs', async () => {
    const ready = await call(`${workers[0]!.url}/health/ready`);
    expect(ready).toMatchObject({ status: 200, body: { status: 'ready', checks: { redis: 'ok' } } });
    const metrics = await Promise.all(workers.map((w) => fetch(`${w.url}/metrics`).then((r) => r.text())));
    expect(metrics.some((m) => /agentplane_runs_total\{agent_id="echo",status="completed"\} \d+/.test(m))).toBe(true);
  });
});

describe('a worker killed in the middle of a slow node', () => {
  it('leaves the run to another worker, which finishes it from the latest checkpoint', async () => {
    const { worker: first, h, run_id, session_id } = await slowRunUnder({ SLOW_NODE_MS: '4000' }, { n: 1 });
    first.signal('SIGKILL');
    expect(await first.exited).toBeNull();
    const second = await startWorker({ SLOW_NODE_MS: '500' });
    try {
      await waitRun(h, run_id, 'completed', 30_000);
      const history = ((await app.backend.store.sessions.listCheckpoints(T, session_id, { limit: 50, offset: 0, maxBytes: Infinity })).checkpoints).reverse();
      expect(history.map((c) => c.seq_num)).toEqual([1, 2, 3, 4]);
      expect(history.map((c) => c.node_id)).toEqual(['before', 'crawl', 'after', '__end__']);
      expect(history[3]!.state).toMatchObject({ n: 1, before: true, crawled: 1, after: true });
      const events = (await sessionEvents(h, session_id)).map((e) => [e.type, e.node].filter(Boolean).join(':'));
      expect(events.filter((e) => e === 'node_start:crawl')).toHaveLength(2);
      expect(events.filter((e) => e === 'node_start:before')).toHaveLength(1);
      expect(events.filter((e) => e === 'completed')).toHaveLength(1);
      const spans = await app.backend.store.sessions.listSpans(T, session_id, ALL);
      expect(spans.filter((s) => s.parent_id === '')).toHaveLength(1);
      expect(spans.filter((s) => s.name === 'crawl')).toHaveLength(1);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  });
});

describe('a worker stopped with SIGTERM in the middle of a slow node', () => {
  it('finishes the running job before it exits 0', async () => {
    const { worker, run_id } = await slowRunUnder({ SLOW_NODE_MS: '1500' });
    worker.signal('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect((await call(`${app.url}/api/runs/${run_id}`)).body.status).toBe('completed');
  });

  it('hands back a node that outlasts SERVICE_SHUTDOWN_TIMEOUT_MS, exits 0, and another worker finishes the run', async () => {
    // The node would run for ten minutes; the worker may wait one second for it. Its lock
    // (WORKER_STALLED_INTERVAL_MS) lapses two seconds later and the next worker takes the run.
    const { worker, h, run_id, session_id } = await slowRunUnder({ SLOW_NODE_MS: '600000', SERVICE_SHUTDOWN_TIMEOUT_MS: '1000' });
    worker.signal('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(worker.lines.some((l) => l.json?.msg === 'graceful shutdown complete')).toBe(true);
    const second = await startWorker({ SLOW_NODE_MS: '200' });
    try {
      await waitRun(h, run_id, 'completed', 30_000);
      const events = (await sessionEvents(h, session_id)).map((e) => [e.type, e.node].filter(Boolean).join(':'));
      expect(events.filter((e) => e === 'node_start:crawl')).toHaveLength(2);
      expect(events.filter((e) => e === 'completed')).toHaveLength(1);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  });
});
