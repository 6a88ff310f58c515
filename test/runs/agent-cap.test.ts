import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import agents from '../fixtures/agents.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { DEFAULT_TENANT } from '../../src/domain/types.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import type { AgentProcess } from '../support/processes.js';
import { usePrivateRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { startRuns } from './scenarios.js';
import { useApiWithWorkers } from '../support/workers.js';

/*
 * An agent that declares `maxConcurrency: 2` (`capped` of test/fixtures/agents.ts, whose node
 * waits for a gate file) through the HTTP API: with 4 worker slots and 6 of its runs posted,
 * 2 run and 4 stay `queued` while a run of another agent of the same tenant completes; once the
 * gate opens every run completes, and the tenant's events never show more than 2 of its runs
 * between their first `node_start` and their `completed`. On Redis, a worker SIGKILLed holding
 * runs of the agent leaves their slots held while the other worker resumes them, then free.
 */

const RUNS = 6;
const SLOTS = 4;

const statusOf = async (url: string, run: string) => (await call(`${url}/api/runs/${run}`)).body.status as string;

/** The most runs of the agent going at once in the tenant's event stream (first node_start → completed). */
async function mostAtOnce(app: TestApi, runs: ReadonlySet<string>): Promise<number> {
  const going = new Set<string>();
  const seen = new Set<string>();
  let most = 0;
  for (const { event } of await app.backend.events.readAfter(DEFAULT_TENANT, '0-0', 10_000)) {
    if (!runs.has(event.run_id)) continue;
    if (event.type === 'node_start' && !seen.has(event.run_id)) {
      seen.add(event.run_id);
      going.add(event.run_id);
      most = Math.max(most, going.size);
    } else if (event.type === 'completed') going.delete(event.run_id);
  }
  expect(seen.size).toBe(runs.size);
  return most;
}

function scenario(app: () => TestApi, gate: () => string): void {
  it('runs at most 2 of the agent’s runs at once, the rest stay queued while another agent’s run completes, and all complete', async () => {
    const { url } = app();
    const runs = await startRuns(url, { agent_id: 'capped' }, RUNS);
    const statuses = () => Promise.all(runs.map((run) => statusOf(url, run)));
    const count = (all: string[], status: string) => all.filter((s) => s === status).length;
    await waitFor('2 runs running', async () => count(await statuses(), 'running') === 2, 60_000);
    // Slots are free: a run of another agent of the same tenant goes past the capped backlog.
    const echo = await call(`${url}/api/runs/wait`, { method: 'POST', json: { agent_id: 'echo', input: { n: 1 }, wait_ms: 60_000 } });
    expect(echo.body.status).toBe('completed');
    const now = await statuses();
    expect([count(now, 'running'), count(now, 'queued')]).toEqual([2, RUNS - 2]);
    const queued = await call(`${url}/api/runs/${runs[now.indexOf('queued')]!}`);
    expect(queued.body).toMatchObject({ status: 'queued', queue: { tenant_queued: RUNS - 2 } });
    writeFileSync(gate(), '');
    await waitFor('every run completed', async () => (await statuses()).every((s) => s === 'completed'), 120_000);
    expect(await mostAtOnce(app(), new Set(runs))).toBe(2);
  }, 180_000);
}

describe('embedded backend', () => {
  let app: TestApi;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agent-cap-'));
    process.env.CAPPED_GATE_FILE = join(dir, 'open');
    app = await startTestApi({ env: { WORKER_CONCURRENCY: String(SLOTS) }, agents: new AgentRegistry(agents) });
  });
  afterAll(async () => {
    await app?.close();
    delete process.env.CAPPED_GATE_FILE;
    rmSync(dir, { recursive: true, force: true });
  });
  scenario(
    () => app,
    () => process.env.CAPPED_GATE_FILE!,
  );
});

describe('Redis backend with two worker processes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-cap-'));
  const redis = usePrivateRedis();
  const stack = useApiWithWorkers(() => redis.url, { workerEnv: { WORKER_CONCURRENCY: String(SLOTS / 2), CAPPED_GATE_FILE: join(dir, 'open') } });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  scenario(
    () => stack.app,
    () => join(dir, 'open'),
  );

  it('gives back the slots of a worker SIGKILLed holding the agent’s runs: the other resumes them, and the agent runs 2 at once again', async () => {
    const { app, workers } = stack;
    const { url } = app;
    const gate = join(dir, 'open');
    rmSync(gate, { force: true });
    const post = async () => (await call(`${url}/api/runs`, { method: 'POST', json: { agent_id: 'capped' } })).body.run_id as string;
    const runs = [await post(), await post(), await post()];
    const statuses = () => Promise.all(runs.map((run) => statusOf(url, run)));
    const lines = (worker: AgentProcess, msg: string) =>
      new Set(worker.lines.filter((l) => l.json?.msg === msg && runs.includes(l.json.run_id as string)).map((l) => l.json!.run_id as string));
    const held = (worker: AgentProcess) => {
      const ended = lines(worker, 'run job ended');
      return [...lines(worker, 'run job started')].filter((run) => !ended.has(run));
    };
    const victim = await waitFor('a worker holding a run of the agent', () => workers.find((w) => held(w).length > 0), 60_000);
    await waitFor('2 runs running', async () => (await statuses()).filter((s) => s === 'running').length === 2, 60_000);
    const taken = held(victim);
    victim.signal('SIGKILL');
    expect(await victim.exited).toBeNull();
    // Stopped with the others after the tests, each of which must exit 0: the killed one is not.
    workers.splice(workers.indexOf(victim), 1);
    writeFileSync(gate, '');
    await waitFor('every run completed', async () => (await statuses()).every((s) => s === 'completed'), 120_000);
    // The killed worker's runs were resumed by the other one (BullMQ's stalled-job recovery).
    for (const run of taken) expect(lines(workers[0]!, 'run job started').has(run), run).toBe(true);
    expect(await mostAtOnce(app, new Set(runs))).toBe(2);
    // Both slots of the agent were given back: two new runs of it run at once, a third waits.
    rmSync(gate);
    const again = [await post(), await post(), await post()];
    const now = () => Promise.all(again.map((run) => statusOf(url, run)));
    await waitFor('2 new runs running, 1 queued', async () => {
      const all = await now();
      return all.filter((s) => s === 'running').length === 2 && all.includes('queued');
    }, 60_000);
    writeFileSync(gate, '');
    await waitFor('the new runs completed', async () => (await now()).every((s) => s === 'completed'), 60_000);
  }, 240_000);
});
