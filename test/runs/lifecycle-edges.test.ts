import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CUSTOM_EVENT_BYTES } from '../../src/domain/types.js';
import { defineAgent } from '../../src/runtime/agent.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import agents from '../fixtures/agents.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import type { AgentProcess } from '../support/processes.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis.js';
import { harnessOf, startRunWorker } from './backends.js';
import { sessionEvents, sessionEventsEndingWith, startRun, waitRun } from './scenarios.js';

/** Emits `size` characters of data in one custom event (JSON: the string plus its quotes). */
const emitter = defineAgent({
  id: 'emitter',
  description: 'Emits one custom event of input.size characters, then ends.',
  entry: 'emit',
  nodes: {
    emit: async (state, ctx) => {
      await ctx.emit('blob', 'x'.repeat(Number(state.size)));
      return { emitted: true };
    },
  },
  edges: { emit: '__end__' },
});

describe('ctx.emit bounds each custom event (embedded)', () => {
  let app: TestApi;
  beforeAll(async () => {
    app = await startTestApi({ agents: new AgentRegistry([...agents, emitter]) });
  });
  afterAll(async () => {
    await app?.close();
  });

  it(`publishes data of ${MAX_CUSTOM_EVENT_BYTES} bytes of JSON; one byte more fails the node and the run, publishing nothing`, async () => {
    const h = harnessOf(app);
    const fits = await startRun(h, { agent_id: 'emitter', input: { size: MAX_CUSTOM_EVENT_BYTES - 2 } });
    await waitRun(h, fits.run_id, 'completed');
    const custom = (await sessionEvents(h, fits.session_id)).filter((e) => e.type === 'custom');
    expect(custom).toHaveLength(1);
    expect((custom[0]!.data as string).length).toBe(MAX_CUSTOM_EVENT_BYTES - 2);

    const over = await startRun(h, { agent_id: 'emitter', input: { size: MAX_CUSTOM_EVENT_BYTES - 1 } });
    const run = await waitRun(h, over.run_id, 'failed');
    expect(run.error).toContain(`larger than ${MAX_CUSTOM_EVENT_BYTES} bytes`);
    const events = await sessionEventsEndingWith(h, over.session_id, 'failed');
    expect(events.filter((e) => e.type === 'custom')).toEqual([]);
    expect(events.filter((e) => e.type === 'failed')).toHaveLength(1);
  });
});

describe('a run of an agent its worker does not have (Redis, a worker process with the built-in agents only)', () => {
  let redis: PrivateRedis;
  let app: TestApi;
  let worker: AgentProcess;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    // The API knows the test agents; the worker only the built-ins (no AGENTS_MODULE).
    app = await startTestApi({ redisUrl: redis.url, agents: new AgentRegistry(agents) });
    worker = await startRunWorker(redis.url, app, { AGENTS_MODULE: '' });
  });
  afterAll(async () => {
    const code = await worker?.stop();
    await app?.close();
    await redis?.stop();
    expect(code).toBe(0);
  });

  it('ends failed with an error naming the agent and a failed event; nothing stays running', async () => {
    const h = harnessOf(app);
    const { run_id, session_id } = await startRun(h, { agent_id: 'slow', input: {} });
    const run = await waitRun(h, run_id, 'failed', 15_000);
    expect(run.error).toBe('Agent "slow" is not registered on this worker.');
    const events = (await sessionEventsEndingWith(h, session_id, 'failed')).filter((e) => e.run_id === run_id);
    expect(events.map((e) => e.type)).toEqual(['failed']);
    expect(events[0]!.error).toBe(run.error);
    // A built-in agent on the same worker runs.
    const echo = await startRun(h, { agent_id: 'echo', input: { message: 'hi' } });
    await waitRun(h, echo.run_id, 'completed', 15_000);
    expect((await call(`${app.url}/api/runs?status=running`)).body.runs).toEqual([]);
  });
});
