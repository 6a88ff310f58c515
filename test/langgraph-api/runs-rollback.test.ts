import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BACKENDS, gates, useLangGraphApi, type LangGraphApi } from './runs-support.js';
import { waitFor } from '../support/wait.js';

/*
 * Rollback through the real SDK Client, on both backends, as LangGraph's server does it: a
 * cancel with action rollback, multitask_strategy rollback and a run's delete remove the run
 * (404) and the thread's checkpoints it wrote, the thread's state (and the session's native
 * state) back to what it was before the run.
 */

const BEFORE = { steps: ['a:x', 'b:x', 'c:x'], word: 'x' };

/** A thread of lg-gated with one completed run (word x), and a second run held at its gate (after a:hold). */
async function threadWithHeldRun(api: LangGraphApi) {
  const thread = randomUUID();
  await api.client.runs.wait(thread, 'lg-gated', { input: { word: 'x' }, ifNotExists: 'create' });
  const before = gates.waiting;
  const run = await api.client.runs.create(thread, 'lg-gated', { input: { word: 'hold' } });
  await waitFor('the run held at its gate', () => gates.waiting > before);
  // The held run wrote checkpoints (its input, node a): what the rollback must take away.
  expect(await runIdsInHistory(api, thread)).toContain(run.run_id);
  expect((await api.client.threads.getState(thread)).values).toMatchObject({ steps: [...BEFORE.steps, 'a:hold'], word: 'hold' });
  return { thread, run };
}

async function runIdsInHistory(api: LangGraphApi, thread: string): Promise<string[]> {
  const history = await api.client.threads.getHistory(thread, { limit: 100 });
  return history.map((state) => (state.metadata as { run_id?: string } | null)?.run_id ?? '');
}

/** The run is gone (LangGraph's and agentplane's views), its checkpoints too, the thread idle at its state before it. */
async function expectRolledBack(api: LangGraphApi, thread: string, runId: string, values: unknown = BEFORE) {
  await expect(api.client.runs.get(thread, runId)).rejects.toThrow(/404/);
  expect((await api.get(`/api/runs/${runId}`)).status).toBe(404);
  expect((await api.client.runs.list(thread)).map((r) => r.run_id)).not.toContain(runId);
  expect(await runIdsInHistory(api, thread)).not.toContain(runId);
  expect((await api.client.threads.getState(thread)).values).toEqual(values);
  expect((await api.get(`/api/sessions/state?session_id=${thread}`)).body.state).toEqual(values);
  expect(await api.client.threads.get(thread)).toMatchObject({ status: 'idle', values });
}

describe.each(BACKENDS)('LangGraph rollback through the SDK (%s)', (backend) => {
  const api = useLangGraphApi(backend);

  it('cancel with action rollback: the running run is deleted, the thread back to its state before it', async () => {
    const { thread, run } = await threadWithHeldRun(api);
    await api.client.runs.cancel(thread, run.run_id, true, 'rollback');
    await expectRolledBack(api, thread, run.run_id);
    // The thread goes on from there.
    expect(await api.client.runs.wait(thread, 'lg-gated', { input: { word: 'y' } })).toEqual({ steps: [...BEFORE.steps, 'a:y', 'b:y', 'c:y'], word: 'y' });
  });

  it('cancel with action rollback of a run paused at an interrupt closes its approval and deletes it', async () => {
    const thread = randomUUID();
    let runId: string | undefined;
    const paused = (await api.client.runs.wait(thread, 'lg-review', { input: { word: 'r' }, ifNotExists: 'create', onRunCreated: (m) => (runId = m.run_id) })) as any;
    const approvalId = `${runId}.${paused.__interrupt__[0].id}`;
    expect((await api.get(`/api/approvals/${approvalId}`)).body.status).toBe('pending');
    await api.client.runs.cancel(thread, runId!, false, 'rollback');
    await expect(api.client.runs.get(thread, runId!)).rejects.toThrow(/404/);
    expect((await api.get(`/api/approvals/${approvalId}`)).status).toBe(404);
    expect(await runIdsInHistory(api, thread)).toEqual([]);
    expect(await api.client.threads.get(thread)).toMatchObject({ status: 'idle' });
  });

  it('multitask rollback: the running run is deleted and the new one runs on the state before it', async () => {
    const { thread, run } = await threadWithHeldRun(api);
    const next = await api.client.runs.create(thread, 'lg-gated', { input: { word: 'new' }, multitaskStrategy: 'rollback' });
    expect(await api.client.runs.join(thread, next.run_id)).toEqual({ steps: [...BEFORE.steps, 'a:new', 'b:new', 'c:new'], word: 'new' });
    await expectRolledBack(api, thread, run.run_id, { steps: [...BEFORE.steps, 'a:new', 'b:new', 'c:new'], word: 'new' });
    expect(await api.client.runs.get(thread, next.run_id)).toMatchObject({ status: 'success', multitask_strategy: 'rollback' });
  });

  it('delete: an ended run goes with its checkpoints (204); an active one is 409, an unknown one 404', async () => {
    const { thread, run } = await threadWithHeldRun(api);
    const active = await fetch(`${api.app.url}/threads/${thread}/runs/${run.run_id}`, { method: 'DELETE' });
    expect(active.status).toBe(409);
    gates.release();
    await api.client.runs.join(thread, run.run_id);
    expect((await api.client.threads.getState(thread)).values).toEqual({ steps: [...BEFORE.steps, 'a:hold', 'b:hold', 'c:hold'], word: 'hold' });
    await api.client.runs.delete(thread, run.run_id);
    await expectRolledBack(api, thread, run.run_id);
    await expect(api.client.runs.delete(thread, run.run_id)).rejects.toThrow(/404/);
  });
});
