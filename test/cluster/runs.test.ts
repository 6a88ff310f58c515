import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import agents from '../fixtures/agents.js';
import { compareEventIds } from '../../src/domain/event-ids.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { watch, type Received, type Watcher } from '../support/sse.js';
import { startRunWorker } from '../runs/backends.js';
import { runScenarios, waitRun } from '../runs/scenarios.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import type { AgentProcess } from '../support/processes.js';
import { startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';
import { uniquePrefix } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/**
 * The whole run path on a real Redis Cluster (3 masters, 3 replicas), every process given
 * REDIS_CLUSTER_NODES: an API in this process and two worker processes pass every run and
 * approval scenario; two API replicas with API keys of three tenants whose hash tags land on
 * three different masters run them concurrently, stream them (resuming across replicas) and
 * share their quotas; a `* * * * *` schedule fires exactly once per tick across the workers.
 */
let cluster: TestRedisCluster;
let env: Record<string, string>;
let app: TestApi;
let a: TestApi;
let b: TestApi;
let workers: AgentProcess[] = [];
let tenants: string[] = [];
let schedule: { id: string; created: number };
const keyOf = (tenant: string) => ({ 'X-Api-Key': `key-${tenant}-9c1e` });
const registry = new AgentRegistry(agents);

beforeAll(async () => {
  cluster = await startRedisCluster();
  env = { REDIS_CLUSTER_NODES: cluster.nodes, SERVICE_KEY_PREFIX: uniquePrefix('cluster-runs') };
  tenants = await cluster.namesOnDistinctMasters('tenant', 3);
  const secured = {
    ...env,
    SERVICE_AUTH: 'apikey',
    SERVICE_API_KEYS: tenants.map((t) => `${keyOf(t)['X-Api-Key']}:user:${t}`).join(','),
    SERVICE_RATE_LIMIT: 'off',
  };
  [app, a, b] = await Promise.all([
    startTestApi({ env, agents: registry }),
    startTestApi({ env: { ...secured, SERVICE_REPLICA_ID: 'replica-a' }, secured: true, agents: registry }),
    startTestApi({ env: { ...secured, SERVICE_REPLICA_ID: 'replica-b' }, secured: true, agents: registry }),
  ]);
  workers = await Promise.all([startRunWorker(env, app), startRunWorker(env, app)]);
  const created = await call(`${app.url}/api/schedules`, { method: 'POST', json: { agent_id: 'echo', cron_expr: '* * * * *', input: { tag: 'tick' } } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  schedule = { id: created.body.id, created: Date.now() };
}, 90_000);

afterAll(async () => {
  const codes = await Promise.all(workers.map((w) => w.stop()));
  await Promise.all([app, a, b].map((api) => api?.close()));
  await cluster?.stop();
  expect(codes).toEqual(codes.map(() => 0));
});

runScenarios('Redis Cluster, API → BullMQ ({prefix}) → worker processes', () => ({ url: app.url, store: app.backend.store, events: app.backend.events }));

const shape = (events: Received[]) => events.map(({ event }) => [event.type, event.node ?? (event.approved === undefined ? '' : String(event.approved))].join(' ').trim());

function expectRising(events: Received[]): void {
  for (let i = 1; i < events.length; i += 1) expect(compareEventIds(events[i]!.id, events[i - 1]!.id)).toBeGreaterThan(0);
}

async function startOn(api: TestApi, tenant: string, body: Record<string, unknown>): Promise<{ run_id: string; session_id: string }> {
  const started = await call(`${api.url}/api/runs`, { method: 'POST', json: body, headers: keyOf(tenant) });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  return started.body;
}

async function runStatus(api: TestApi, tenant: string, runId: string): Promise<Record<string, any>> {
  return (await call(`${api.url}/api/runs/${runId}`, { headers: keyOf(tenant) })).body;
}

const HUMAN_REVIEW = ['node_start draft', 'node_end draft', 'node_start review', 'interrupted review', 'approval_decided true', 'node_start review', 'node_end review', 'node_start publish', 'node_end publish', 'completed'];

describe('tenants on three masters, two API replicas', () => {
  it('runs of every tenant, started on B and answered on A, complete; each tenant’s stream on A sees only and all of its events, in order', async () => {
    const streams = new Map<string, Watcher>(tenants.map((t) => [t, watch(`${a.url}/api/events/stream`, { headers: keyOf(t) })]));
    onTestFinished(() => streams.forEach((s) => s.close()));
    await Promise.all([...streams.values()].map((s) => s.waitForOpen()));
    const runs = await Promise.all(
      tenants.flatMap((tenant) => [
        startOn(b, tenant, { agent_id: 'echo', input: { text: tenant } }).then((r) => ({ tenant, ...r, kind: 'echo' })),
        startOn(b, tenant, { agent_id: 'human-review', input: { topic: tenant } }).then((r) => ({ tenant, ...r, kind: 'review' })),
      ]),
    );
    for (const run of runs.filter((r) => r.kind === 'review')) {
      const paused = await waitFor(`${run.run_id} to pause`, async () => {
        const now = await runStatus(a, run.tenant, run.run_id);
        return now.status === 'interrupted' && now;
      });
      const answer = await call(`${a.url}/api/approval/respond`, { method: 'POST', json: { id: paused.approval_id, approved: true }, headers: keyOf(run.tenant) });
      expect(answer.status).toBe(200);
    }
    for (const run of runs) await waitFor(`${run.run_id} to complete`, async () => (await runStatus(b, run.tenant, run.run_id)).status === 'completed');
    for (const tenant of tenants) {
      const stream = streams.get(tenant)!;
      const mine = runs.filter((r) => r.tenant === tenant);
      await stream.waitForCount(15);
      expect(stream.received).toHaveLength(15);
      expect(new Set(stream.received.map((e) => e.event.run_id))).toEqual(new Set(mine.map((r) => r.run_id)));
      expectRising(stream.received);
      const review = mine.find((r) => r.kind === 'review')!;
      expect(shape(stream.received.filter((e) => e.event.run_id === review.run_id))).toEqual(HUMAN_REVIEW);
    }
  });

  it('a stream closed on A resumes on B with Last-Event-ID: every event after it, no gap, no duplicate', async () => {
    const tenant = tenants[1]!;
    const first = watch(`${a.url}/api/events/stream`, { headers: keyOf(tenant) });
    onTestFinished(() => first.close());
    await first.waitForOpen();
    const { run_id } = await startOn(b, tenant, { agent_id: 'human-review', input: { topic: 'resume' } });
    await first.waitForCount(4);
    first.close();
    const seen = first.received.filter((e) => e.event.run_id === run_id);
    expect(shape(seen)).toEqual(HUMAN_REVIEW.slice(0, 4));
    const approval = seen[3]!.event.approval_id!;
    const answer = await call(`${b.url}/api/approval/respond`, { method: 'POST', json: { id: approval, approved: true }, headers: keyOf(tenant) });
    expect(answer.status).toBe(200);
    await waitFor('the run to complete', async () => (await runStatus(a, tenant, run_id)).status === 'completed');
    const resumed = watch(`${b.url}/api/events/stream`, { headers: keyOf(tenant), lastEventId: seen.at(-1)!.id });
    onTestFinished(() => resumed.close());
    await resumed.waitForCount(6);
    const all = [...seen, ...resumed.received.filter((e) => e.event.run_id === run_id)];
    expect(shape(all)).toEqual(HUMAN_REVIEW);
    expectRising(all);
  });
});

describe('limits shared by two replicas on the cluster', () => {
  it('counts a tenant’s quota over both replicas (the 6th of 5/60s is refused), each tenant apart', async () => {
    const limitedEnv = {
      ...env,
      SERVICE_KEY_PREFIX: uniquePrefix('cluster-limits'),
      SERVICE_AUTH: 'apikey',
      SERVICE_API_KEYS: tenants.map((t) => `${keyOf(t)['X-Api-Key']}:user:${t}`).join(','),
      SERVICE_RATE_LIMIT: '100/60s',
      SERVICE_QUOTA_PER_TENANT: '5/60s',
    };
    const pair = await Promise.all([0, 1].map(() => startTestApi({ env: limitedEnv, secured: true, agents: registry })));
    onTestFinished(async () => {
      await Promise.all(pair.map((api) => api.close()));
    });
    for (const api of pair) await waitFor('the replica connected to Redis', async () => (await api.backend.store.ping(), true));
    for (const tenant of tenants.slice(0, 2)) {
      const statuses: number[] = [];
      let last: Response | undefined;
      for (let i = 0; i < 6; i += 1) {
        last = await fetch(`${pair[i % 2]!.url}/api/agents`, { headers: keyOf(tenant) });
        statuses.push(last.status);
        await last.arrayBuffer();
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
      expect(last!.headers.get('ratelimit-policy')).toBe('"tenant";q=5;w=60');
    }
  });
});

describe('readiness on the cluster', () => {
  it('every process says ready with its Redis check ok', async () => {
    for (const url of [app.url, a.url, ...workers.map((w) => w.url)]) {
      expect(await call(`${url}/health/ready`)).toMatchObject({ status: 200, body: { status: 'ready', checks: { redis: 'ok' } } });
    }
  });
});

describe('a schedule on the cluster', () => {
  it('fires once per minute tick across the two workers, each fire one run that completes', async () => {
    const history = async () => (await call(`${app.url}/api/schedules/${schedule.id}/history`)).body.history as { due_at: string; status: string; run_id?: string }[];
    // The first tick comes within a minute of the schedule's creation.
    const records = await waitFor('a completed fire', async () => {
      const list = await history();
      return list.length > 0 && list.every((r) => r.status === 'completed') && list;
    }, 60_000 - (Date.now() - schedule.created) + 30_000, 250);
    const ticks = records.map((r) => r.due_at);
    expect(new Set(ticks).size).toBe(ticks.length);
    for (const record of records) {
      expect(record.run_id).toEqual(expect.any(String));
      await waitRun({ url: app.url, store: app.backend.store, events: app.backend.events }, record.run_id!, 'completed');
    }
    // One run per fire record, and no run of the schedule's sessions besides them.
    const sessions = await call(`${app.url}/api/sessions?agent_id=echo&limit=500`);
    const runs = await Promise.all(
      sessions.body.sessions.map(async (s: { id: string }) => (await call(`${app.url}/api/runs?session_id=${s.id}`)).body.runs as { id: string; input?: unknown }[]),
    );
    const tickRuns = new Set(records.map((r) => r.run_id));
    expect(runs.flat().filter((r) => tickRuns.has(r.id))).toHaveLength(records.length);
  });
});
