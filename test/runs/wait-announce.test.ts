import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import agents from '../fixtures/agents.js';
import type { StoredEvent } from '../../src/domain/types.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import type { AgentProcess } from '../support/processes.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { startRunWorker } from './backends.js';
import { postWait, respond } from './wait.js';

const T = 'DefaultTenant';

/**
 * On Redis, the end of a run that a request waits for is announced with the run and its state
 * (StoredEvent.stop, never in the stream), so the waiting replica answers without reading them
 * back (a run started by POST /api/runs/wait, or resumed by an answer with `wait_ms`); other
 * runs, and states over 64 KiB, are announced without them.
 */
describe('POST /api/runs/wait answered from the end announcement (Redis, a worker process)', () => {
  let redis: PrivateRedis;
  let app: TestApi;
  let worker: AgentProcess;
  const ends = new Map<string, StoredEvent>();
  let unsubscribe = () => {};
  beforeAll(async () => {
    redis = await startPrivateRedis();
    app = await startTestApi({ redisUrl: redis.url, agents: new AgentRegistry(agents) });
    worker = await startRunWorker(redis.url, app);
    unsubscribe = app.backend.events.subscribe(T, (stored) => {
      if (stored.event.type === 'completed') ends.set(stored.event.run_id, stored);
    });
    await app.backend.events.ready(5_000);
  });
  afterAll(async () => {
    unsubscribe();
    const code = await worker?.stop();
    await app?.close();
    await redis?.stop();
    expect(code).toBe(0);
  });

  const endOf = (runId: string) => waitFor(`the completed announcement of ${runId}`, () => ends.get(runId));

  it("carries a waited run's end with the run and its state, which is what the wait answers", async () => {
    const response = await postWait(app.url, { agent_id: 'echo', input: { message: 'hi' }, wait_ms: 10_000 });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const end = await endOf(response.body.id);
    expect(end.stop).toBeDefined();
    expect(end.stop!.run).toMatchObject({ id: response.body.id, status: 'completed', seq_num: response.body.seq_num });
    expect(end.stop!.run).not.toHaveProperty('waited');
    expect(end.stop!.run).not.toHaveProperty('created_ms');
    const { state, ...run } = response.body;
    expect(run).toEqual(end.stop!.run);
    expect(state).toEqual(end.stop!.state);
    // The same state as a read of the session's checkpoint.
    expect((await call(`${app.url}/api/sessions/state?session_id=${run.session_id}`)).body.state).toEqual(state);
    // Only the announcement carries it: the stream entry (what a resume reads) does not.
    const replay = await app.backend.events.readAfter(T, '0-0', 10_000);
    const stored = replay.find((e) => e.id === end.id)!;
    expect(stored.event).toEqual(end.event);
    expect(stored).not.toHaveProperty('stop');
  });

  it('announces the end of a run nobody waits for without them', async () => {
    const started = await call(`${app.url}/api/runs`, { method: 'POST', json: { agent_id: 'echo', input: { message: 'hi' } } });
    expect(started.status).toBe(202);
    const end = await endOf(started.body.run_id);
    expect(end).not.toHaveProperty('stop');
  });

  /** Starts human-review with POST /api/runs (not a wait) and resolves once it asks. */
  async function interrupted(): Promise<{ id: string; approval_id: string }> {
    const started = await call(`${app.url}/api/runs`, { method: 'POST', json: { agent_id: 'human-review', input: { draft: 'v1' } } });
    expect(started.status).toBe(202);
    const id = started.body.run_id as string;
    return waitFor(`run ${id} to ask`, async () => {
      const run = (await call(`${app.url}/api/runs/${id}`)).body;
      return run.status === 'interrupted' && run.approval_id ? { id, approval_id: run.approval_id as string } : undefined;
    });
  }

  it('marks a run answered with wait_ms as waited: its end carries the run and state, which is what the answer holds', async () => {
    const run = await interrupted();
    const answer = await respond(app.url, { id: run.approval_id, approved: true, comment: 'ship it', wait_ms: 10_000 });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.run).toMatchObject({ id: run.id, status: 'completed' });
    const end = await endOf(run.id);
    expect(end.stop).toBeDefined();
    const { state, ...answered } = answer.body.run;
    expect(answered).toEqual(end.stop!.run);
    expect(state).toEqual(end.stop!.state);
    expect(state).toMatchObject({ comment: 'ship it' });
  });

  it('announces the end of a run answered without wait_ms without them', async () => {
    const run = await interrupted();
    const answer = await respond(app.url, { id: run.approval_id, approved: true });
    expect(answer.status).toBe(200);
    expect(answer.body).not.toHaveProperty('run');
    const end = await endOf(run.id);
    expect(end).not.toHaveProperty('stop');
  });

  it('announces a waited run whose state is over 64 KiB without it; the wait reads the state back', async () => {
    const message = 'x'.repeat(70_000);
    const response = await postWait(app.url, { agent_id: 'echo', input: { message }, wait_ms: 10_000 });
    expect(response.status, JSON.stringify(response.body).slice(0, 500)).toBe(200);
    expect(response.body).toMatchObject({ status: 'completed' });
    expect(response.body.state.message).toBe(message);
    const end = await endOf(response.body.id);
    expect(end).not.toHaveProperty('stop');
    expect((await call(`${app.url}/api/sessions/state?session_id=${response.body.session_id}`)).body.state).toEqual(response.body.state);
  });
});
