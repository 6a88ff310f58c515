import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import agents from '../fixtures/agents.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { parsePrometheus } from '../support/http.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { startRuns } from '../runs/scenarios.js';

/*
 * `agentplane_agent_runs_running{agent_id}`, `agentplane_agent_runs_waiting{agent_id}` and
 * `agentplane_agent_runs_max{agent_id}` on both backends, read at scrape time from the run
 * queue: `capped` of test/fixtures/agents.ts (maxConcurrency 2, its node waits for the file
 * CAPPED_GATE_FILE), 5 of its runs posted with 4 worker slots: 2 running, 3 waiting at the cap,
 * max 2; once the gate opens and every run completed, 0 and 0. With the cap lifted
 * (SERVICE_AGENT_MAX_RUNNING=capped:0) no agent is capped and there is no such series.
 */

const RUNS = 5;
const SLOTS = 4;
const GAUGES = ['agentplane_agent_runs_running', 'agentplane_agent_runs_waiting', 'agentplane_agent_runs_max'] as const;

type AgentGauges = Record<string, { running?: number; waiting?: number; max?: number }>;

async function agentGauges(url: string): Promise<AgentGauges> {
  const families = parsePrometheus(await (await fetch(`${url}/metrics`)).text());
  const rows: AgentGauges = {};
  for (const name of GAUGES) {
    const family = families.get(name);
    expect(family?.type, name).toBe('GAUGE');
    for (const sample of family!.metrics) {
      expect(Object.keys(sample.labels ?? {}), name).toEqual(['agent_id']);
      const row = (rows[sample.labels!.agent_id!] ??= {});
      row[name.slice('agentplane_agent_runs_'.length) as 'running' | 'waiting' | 'max'] = Number(sample.value);
    }
  }
  return rows;
}

function scenario(app: () => TestApi): void {
  it('shows 2 running, 3 waiting at the cap of 2, then 0 and 0 once every run completed', async () => {
    const { url } = app();
    const runs = await startRuns(url, { agent_id: 'capped' }, RUNS);
    const expected = { capped: { running: 2, waiting: RUNS - 2, max: 2 } };
    await waitFor('2 runs of capped admitted, 3 waiting at its cap', async () => JSON.stringify(await agentGauges(url)) === JSON.stringify(expected), 60_000);
    expect(await agentGauges(url)).toEqual(expected);
    writeFileSync(process.env.CAPPED_GATE_FILE!, '');
    const statuses = () => Promise.all(runs.map(async (run) => (await call(`${url}/api/runs/${run}`)).body.status as string));
    await waitFor('every run completed', async () => (await statuses()).every((s) => s === 'completed'), 120_000);
    await waitFor('the gauges at 0', async () => (await agentGauges(url)).capped?.running === 0);
    expect(await agentGauges(url)).toEqual({ capped: { running: 0, waiting: 0, max: 2 } });
  }, 180_000);
}

function uncapped(app: () => TestApi): void {
  it('has no agent_runs series when no agent is capped', async () => {
    const text = await (await fetch(`${app().url}/metrics`)).text();
    expect(text).toContain('agentplane_approvals_pending');
    expect(text).not.toContain('agentplane_agent_runs');
  });
}

const ENV = { WORKER_CONCURRENCY: String(SLOTS) };
const UNCAPPED = { ...ENV, SERVICE_AGENT_MAX_RUNNING: 'capped:0' };
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'agent-metrics-'));
  process.env.CAPPED_GATE_FILE = join(dir, 'open');
});
afterAll(() => {
  delete process.env.CAPPED_GATE_FILE;
  rmSync(dir, { recursive: true, force: true });
});

describe('embedded backend', () => {
  let app: TestApi;
  let off: TestApi;
  beforeAll(async () => {
    rmSync(process.env.CAPPED_GATE_FILE!, { force: true });
    app = await startTestApi({ env: ENV, agents: new AgentRegistry(agents) });
    off = await startTestApi({ env: UNCAPPED, agents: new AgentRegistry(agents) });
  });
  afterAll(async () => {
    await app?.close();
    await off?.close();
  });
  scenario(() => app);
  uncapped(() => off);
});

describe('Redis backend, the API executing runs and scraping the shared counts', () => {
  let redis: TestRedis;
  let app: TestApi;
  let off: TestApi;
  beforeAll(async () => {
    rmSync(process.env.CAPPED_GATE_FILE!, { force: true });
    redis = await startRedis();
    app = await startTestApi({ redisUrl: redis.url, env: ENV, agents: new AgentRegistry(agents) });
    app.composition.startExecuting();
    off = await startTestApi({ redisUrl: redis.url, env: UNCAPPED, agents: new AgentRegistry(agents) });
  });
  afterAll(async () => {
    await app?.close();
    await off?.close();
    await redis?.stop();
  });
  scenario(() => app);
  uncapped(() => off);
});
