import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { builtInAgents } from '../../src/agents/index.js';
import { DEFAULT_TENANT } from '../../src/domain/types.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { useRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { heldNodes, hold } from './hold-agents.js';

/** A service's concurrency: more than its 32 workers, twice the old stream cap (20). */
const CALLERS = 40;
const KEY = 'k-service-1';

const redis = useRedis();

/** The value of an unlabelled gauge on /metrics (undefined when the process does not export it). */
async function gauge(url: string, name: string): Promise<number | undefined> {
  const text = (await call(`${url}/metrics`)).body as string;
  const value = new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1];
  return value === undefined ? undefined : Number(value);
}

/**
 * One caller of a service, as its workers would be: on memory the default configuration
 * without auth (every request comes from one address), on Redis one API key. Nothing is tuned.
 */
describe.each(['memory', 'redis'] as const)('held waits of one caller on one replica (%s, default limits)', (mode) => {
  let app: TestApi;
  const headers: Record<string, string> = mode === 'redis' ? { 'X-Api-Key': KEY } : {};

  beforeAll(async () => {
    app = await startTestApi({
      ...(mode === 'redis' ? { redisUrl: redis.url } : {}),
      agents: new AgentRegistry([...builtInAgents, hold]),
      secured: true,
      env: mode === 'redis' ? { SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: `${KEY}:user` } : {},
    });
    // On Redis the runs go through BullMQ; this process takes the jobs.
    if (mode === 'redis') app.composition.startExecuting();
  });
  afterAll(async () => {
    await app?.close();
  });

  const post = (path: string, json: unknown) => call(`${app.url}${path}`, { method: 'POST', json, headers });
  const runsOf = async (sessions: string[]) =>
    (await Promise.all(sessions.map((s) => app.backend.store.runs.findRuns(DEFAULT_TENANT, { session_id: s, limit: 1, offset: 0 })))).flat();
  /**
   * Cancels whatever of `sessions` is still active when the test ends, however it ends, and
   * waits for the nodes to let go (the executor hears of a cancel asynchronously).
   */
  const cancelOnFinish = (sessions: string[]) =>
    onTestFinished(async () => {
      for (const run of await runsOf(sessions)) if (['queued', 'running', 'interrupted'].includes(run.status)) await post(`/api/runs/${run.id}/cancel`, {});
      await waitFor('the held nodes to let go', () => heldNodes() === 0);
    });

  it(`${CALLERS} concurrent POST /api/runs/wait are all held, then all answered: none is refused 429`, async () => {
    const sessions = Array.from({ length: CALLERS }, () => `held-${randomUUID()}`);
    cancelOnFinish(sessions);
    const answered: { status: number; body: any }[] = [];
    const waits = sessions.map(async (session_id) => {
      const response = await post('/api/runs/wait', { agent_id: 'hold', session_id, wait_ms: 120_000 });
      answered.push(response);
      return response;
    });
    // Every request is either answered or has its run (then held: `hold` never stops alone).
    await waitFor('every wait to be answered or to have started its run', async () => answered.length + (await runsOf(sessions)).length === CALLERS);
    expect(answered.map((r) => `${r.status} ${JSON.stringify(r.body)}`)).toEqual([]);
    await waitFor(`${CALLERS} held waits`, async () => (await gauge(app.url, 'agentplane_waits_held')) === CALLERS);

    for (const run of await runsOf(sessions)) expect((await post(`/api/runs/${run.id}/cancel`, {})).status).toBe(200);
    const results = await Promise.all(waits);
    expect(results.map((r) => r.status)).toEqual(sessions.map(() => 200));
    expect(results.map((r) => r.body.status)).toEqual(sessions.map(() => 'cancelled'));
  });

  it('agentplane_waits_held rises while waits are held and falls after; a run stream counts in agentplane_sse_connections only', async () => {
    await waitFor('no wait left from earlier tests', async () => (await gauge(app.url, 'agentplane_waits_held')) === 0);
    const sessions = [`gauge-${randomUUID()}`, `gauge-${randomUUID()}`, `gauge-${randomUUID()}`];
    cancelOnFinish(sessions);
    const waits = sessions.slice(0, 2).map((session_id) => post('/api/runs/wait', { agent_id: 'hold', session_id, wait_ms: 120_000 }));
    const stream = await fetch(`${app.url}/api/runs/stream`, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json' },
      body: JSON.stringify({ agent_id: 'hold', session_id: sessions[2] }),
    });
    expect(stream.status).toBe(200);
    const streamed = stream.text();
    await waitFor('two held waits', async () => (await gauge(app.url, 'agentplane_waits_held')) === 2);
    expect(await gauge(app.url, 'agentplane_sse_connections')).toBe(1);

    const runs = await waitFor('the three runs', async () => {
      const found = await runsOf(sessions);
      return found.length === 3 && found;
    });
    for (const run of runs) expect((await post(`/api/runs/${run.id}/cancel`, {})).status).toBe(200);
    expect((await Promise.all(waits)).map((r) => r.body.status)).toEqual(['cancelled', 'cancelled']);
    expect(await streamed).toContain('"type":"cancelled"');
    await waitFor('no held wait', async () => (await gauge(app.url, 'agentplane_waits_held')) === 0);
    await waitFor('no open stream', async () => (await gauge(app.url, 'agentplane_sse_connections')) === 0);
  });
});
