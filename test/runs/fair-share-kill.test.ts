import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import agents from '../fixtures/agents.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import type { AgentProcess } from '../support/processes.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { startRunWorker } from './backends.js';

/*
 * A worker SIGKILLed while it holds runs of several tenants gives their slots back: the other
 * worker takes the stalled jobs over (BullMQ's stalled-job recovery), every run completes, and
 * each tenant's queue returns to 0 queued, 0 running. Redis, the API in this process, two
 * worker processes of 2 slots each.
 */

const TENANTS = ['KillA', 'KillB', 'KillC'] as const;
type Tenant = (typeof TENANTS)[number];
const KEYS = TENANTS.map((t) => `key-${t.toLowerCase()}-0123456789abcdef`);
const ENV = {
  SERVICE_AUTH: 'apikey',
  SERVICE_API_KEYS: TENANTS.map((t, i) => `${KEYS[i]}:admin:${t}`).join(','),
  SERVICE_RATE_LIMIT: 'off',
};
const RUNS_PER_TENANT = 3;

const as = (tenant: Tenant) => ({ 'X-Api-Key': KEYS[TENANTS.indexOf(tenant)]! });

describe('Redis backend: a worker killed holding runs of several tenants', () => {
  let redis: PrivateRedis;
  let app: TestApi;
  let workers: AgentProcess[] = [];
  beforeAll(async () => {
    redis = await startPrivateRedis();
    app = await startTestApi({ redisUrl: redis.url, env: ENV, secured: true, agents: new AgentRegistry(agents) });
    const env = { ...ENV, WORKER_CONCURRENCY: '2', SLOW_NODE_MS: '2000' };
    workers = await Promise.all([startRunWorker(redis.url, app, env), startRunWorker(redis.url, app, env)]);
  }, 180_000);
  afterAll(async () => {
    const codes = await Promise.all(workers.map((w) => w.stop()));
    await app?.close();
    await redis?.stop();
    expect(codes).toEqual(workers.map(() => 0));
  }, 180_000);

  it('the other worker takes its jobs over: every run completes and every tenant’s queue returns to 0', async () => {
    const { url } = app;
    const tenantOf = new Map<string, Tenant>();
    for (let i = 0; i < RUNS_PER_TENANT; i += 1) {
      for (const tenant of TENANTS) {
        const started = await call(`${url}/api/runs`, { method: 'POST', headers: as(tenant), json: { agent_id: 'slow' } });
        expect(started.status, JSON.stringify(started.body)).toBe(202);
        tenantOf.set(started.body.run_id as string, tenant);
      }
    }
    const logged = (worker: AgentProcess, msg: string) =>
      new Set(worker.lines.filter((l) => l.json?.msg === msg && tenantOf.has(l.json.run_id as string)).map((l) => l.json!.run_id as string));
    /** The runs whose job the worker started and has not ended. */
    const held = (worker: AgentProcess) => {
      const ended = logged(worker, 'run job ended');
      return [...logged(worker, 'run job started')].filter((run) => !ended.has(run));
    };
    // Slots go to the tenants in turn, so the four first jobs are of all three tenants: one of
    // the workers holds jobs of two of them.
    const { victim, runs } = await waitFor(
      'a worker holding runs of two tenants',
      () => {
        for (const worker of workers) {
          const runs = held(worker);
          if (new Set(runs.map((run) => tenantOf.get(run))).size >= 2) return { victim: worker, runs };
        }
        return undefined;
      },
      60_000,
    );
    victim.signal('SIGKILL');
    expect(await victim.exited).toBeNull();
    workers = workers.filter((w) => w !== victim);

    const statusOf = async (run: string) => (await call(`${url}/api/runs/${run}`, { headers: as(tenantOf.get(run)!) })).body.status as string;
    await waitFor('every run completed', async () => (await Promise.all([...tenantOf.keys()].map(statusOf))).every((s) => s === 'completed'), 120_000);
    // The killed worker's jobs were taken over by the other one.
    const survivor = workers[0]!;
    for (const run of runs) expect(logged(survivor, 'run job started').has(run), run).toBe(true);
    for (const tenant of TENANTS) {
      await waitFor(`${tenant}’s queue back to 0`, async () => {
        const queue = (await call(`${url}/api/queue`, { headers: as(tenant) })).body;
        return queue.queued === 0 && queue.running === 0;
      }, 30_000);
    }
  }, 240_000);
});
