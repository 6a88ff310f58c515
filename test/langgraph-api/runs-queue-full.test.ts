import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BACKENDS, gates, useLangGraphApi } from './runs-support.js';
import { waitFor } from '../support/wait.js';

/*
 * A LangGraph start refused for the tenant's full queue (429, Retry-After) leaves its thread as
 * it was: a run paused at an interrupt is not cancelled for the new run, a running one is not
 * rolled back or interrupted. The tenant runs 1 run and queues 1: a held run takes the slot,
 * a stateless run fills the queue.
 */

const ENV = { SERVICE_TENANT_MAX_RUNNING: '1', SERVICE_TENANT_MAX_QUEUED: '1', SERVICE_RATE_LIMIT: 'off' };

describe.each(BACKENDS)('LangGraph runs past the tenant’s queued cap (%s)', (backend) => {
  const api = useLangGraphApi(backend, ENV);

  it('refuses a start with 429 and Retry-After and touches nothing of the thread: no paused run cancelled, no running run interrupted', async () => {
    const paused = randomUUID();
    const waited = await api.post(`/threads/${paused}/runs/wait`, { assistant_id: 'lg-review', input: { word: 'p' }, if_not_exists: 'create' });
    expect(waited.body.__interrupt__).toHaveLength(1);
    const [pausedRun] = (await api.get(`/api/runs?session_id=${paused}`)).body.runs;
    expect(pausedRun).toMatchObject({ status: 'interrupted' });

    const held = randomUUID();
    const before = gates.waiting;
    const heldRun = (await api.post(`/threads/${held}/runs`, { assistant_id: 'lg-gated', input: { word: 'hold' }, if_not_exists: 'create' })).body.run_id as string;
    await waitFor('the held run at its gate', () => gates.waiting > before);
    expect((await api.post('/runs', { assistant_id: 'lg-two', input: { word: 'q' } })).status).toBe(200);
    expect((await api.get('/api/queue')).body).toMatchObject({ queued: 1, running: 1 });

    const refusals = [
      [paused, { assistant_id: 'lg-review', input: { word: 'new' } }],
      [held, { assistant_id: 'lg-gated', input: { word: 'x' }, multitask_strategy: 'interrupt' }],
    ] as const;
    for (const [thread, body] of refusals) {
      const refused = await api.post(`/threads/${thread}/runs`, body);
      expect(refused.status, `${JSON.stringify(body)}: ${JSON.stringify(refused.body)}`).toBe(429);
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(refused.body.error.code).toBe('rate_limited');
    }
    expect((await api.get(`/api/runs?session_id=${paused}`)).body.runs).toEqual([expect.objectContaining({ id: pausedRun.id, status: 'interrupted' })]);
    expect((await api.get(`/api/approvals/${pausedRun.approval_id}`)).body.status).toBe('pending');
    expect((await api.get(`/api/runs?session_id=${held}`)).body.runs).toEqual([expect.objectContaining({ id: heldRun, status: 'running' })]);

    gates.release();
    await api.runUntil(heldRun, 'completed');
    await queueEmpty();
  });

  it('looks at the queue before a rollback, counting the places it frees: a full queue refuses a rollback of nothing, a rollback of the thread’s running run is never refused after it', async () => {
    const idle = randomUUID();
    expect((await api.post(`/threads/${idle}/runs/wait`, { assistant_id: 'lg-two', input: { word: 'i' }, if_not_exists: 'create' })).status).toBe(200);
    await queueEmpty();
    const held = randomUUID();
    const before = gates.waiting;
    const heldRun = (await api.post(`/threads/${held}/runs`, { assistant_id: 'lg-gated', input: { word: 'hold' }, if_not_exists: 'create' })).body.run_id as string;
    await waitFor('the held run at its gate', () => gates.waiting > before);
    // The queued run is due in an hour: the slot a rollback frees admits nothing, the queue stays full.
    const later = await api.post('/runs', { assistant_id: 'lg-two', input: { word: 'q' }, after_seconds: 3600 });
    expect(later.status).toBe(200);
    expect((await api.get('/api/queue')).body).toMatchObject({ queued: 1, running: 1 });

    // A thread with nothing active frees nothing: refused, and its finished run stays.
    const refused = await api.post(`/threads/${idle}/runs`, { assistant_id: 'lg-two', input: { word: 'r' }, multitask_strategy: 'rollback' });
    expect(refused.status, JSON.stringify(refused.body)).toBe(429);
    expect((await api.get(`/api/runs?session_id=${idle}`)).body.runs).toEqual([expect.objectContaining({ status: 'completed' })]);

    // The thread's running run is a place the rollback frees: the new run takes it, and is never refused after its thread was rolled back.
    const rolled = await api.post(`/threads/${held}/runs`, { assistant_id: 'lg-gated', input: { word: 'after' }, multitask_strategy: 'rollback' });
    expect(rolled.status, JSON.stringify(rolled.body)).toBe(200);
    await api.runUntil(rolled.body.run_id, 'completed');
    expect((await api.get(`/api/runs?session_id=${held}`)).body.runs.map((run: { id: string }) => run.id)).toEqual([rolled.body.run_id]);
    expect((await api.get(`/api/runs/${heldRun}`)).status).toBe(404);
    expect((await api.post(`/api/runs/${later.body.run_id}/cancel`, {})).status).toBe(200);
    await queueEmpty();
  });

  const queueEmpty = () =>
    waitFor('the tenant’s queue empty', async () => {
      const queue = (await api.get('/api/queue')).body;
      return queue.queued === 0 && queue.running === 0;
    });
});
