import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/app.js';
import { startProcess, type AgentProcess } from '../support/processes.js';
import { startPrivateRedis, uniquePrefix, type PrivateRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/**
 * Issue 25, finding 2, on real processes: an API process and a worker process on a private
 * redis-server that the test stalls (SIGSTOP for STALL_MS, longer than the API's 1 s command
 * timeout). A start sent during the stall answers 503 though Redis runs its write once it
 * resumes; its retry with the same Idempotency-Key answers that run, which then has its job
 * and completes: one run in all, never two. An approval answered during the stall does not
 * take effect and its retry is 200.
 */

const STALL_MS = 2_000;

interface TenantRun {
  id: string;
  session_id: string;
  status: string;
}

describe('retrying a start through a Redis stall (API and worker processes)', () => {
  let redis: PrivateRedis;
  let api: AgentProcess;
  let worker: AgentProcess;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    const env = { REDIS_URL: redis.url, SERVICE_KEY_PREFIX: uniquePrefix('idem'), AGENTS_MODULE: 'test/fixtures/agents.ts', LOG_LEVEL: 'info' };
    [api, worker] = await Promise.all([
      startProcess({ entry: 'src/main/api.ts', env: { ...env, SERVICE_SHUTDOWN_DELAY_MS: '0' }, readyTimeoutMs: 90_000 }),
      startProcess({ entry: 'src/main/worker.ts', portVariable: 'WORKER_PORT', env, readyTimeoutMs: 90_000 }),
    ]);
    // A first run: every connection is up and the tenant is known before anything stalls.
    const warm = await post('/api/runs/wait', { agent_id: 'echo', input: { text: 'warm' }, wait_ms: 90_000 });
    expect(warm.status, JSON.stringify(warm.body)).toBe(200);
  }, 200_000);

  afterAll(async () => {
    redis?.resume();
    const codes = await Promise.all([api?.stop(), worker?.stop()]);
    await redis?.stop();
    expect(codes).toEqual([0, 0]);
  });

  function post(path: string, body: unknown, idempotencyKey?: string) {
    return call(`${api.url}${path}`, { method: 'POST', json: body, headers: idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {} });
  }

  async function tenantRuns(): Promise<TenantRun[]> {
    const page = await call(`${api.url}/api/runs?limit=500`);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    return page.body.runs;
  }

  /** `request` sent while Redis is stopped; Redis resumes STALL_MS after it stopped, once the request was answered. */
  async function duringStall<T>(request: () => Promise<T>): Promise<T> {
    const stoppedAt = Date.now();
    redis.pause();
    try {
      return await request();
    } finally {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, STALL_MS - (Date.now() - stoppedAt))));
      redis.resume();
    }
  }

  it('POST /api/runs without session_id: 503 in the stall, the keyed retry answers the run it created; one run, completed', async () => {
    const before = (await tenantRuns()).map((r) => r.id);
    const key = randomUUID();
    const body = { agent_id: 'echo', input: { text: 'stalled start' } };
    const first = await duringStall(() => post('/api/runs', body, key));
    expect(first.status, JSON.stringify(first.body)).toBe(503);
    expect(first.body.error.code).toBe('unavailable');

    // Redis ran the start's write when it resumed (read here over the API's own connection, so
    // after it): the run exists, unacknowledged, queued with no job. (Had the API not sent the
    // write before its timeout, there would be none, and the retry would create it.)
    const written = (await tenantRuns()).filter((r) => !before.includes(r.id));
    expect(written.map((r) => r.status)).toEqual(['queued']);
    const orphan = written[0]!;

    const retry = await post('/api/runs', body, key);
    expect(retry.status, JSON.stringify(retry.body)).toBe(202);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual({ run_id: orphan.id, session_id: orphan.session_id, status: 'queued' });

    // Its job exists now: a worker completes it, and it stays the only new run.
    await waitFor('the run to complete', async () => (await call(`${api.url}/api/runs/${orphan.id}`)).body.status === 'completed', 60_000);
    expect((await tenantRuns()).filter((r) => !before.includes(r.id)).map((r) => r.id)).toEqual([orphan.id]);

    const reused = await post('/api/runs', { ...body, input: { text: 'another start' } }, key);
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe('idempotency_key_reused');
    expect((await tenantRuns()).filter((r) => !before.includes(r.id)).map((r) => r.id)).toEqual([orphan.id]);
  }, 120_000);

  it('POST /api/runs/wait: 503 in the stall, the keyed retry waits for the same run and answers it completed', async () => {
    const before = (await tenantRuns()).map((r) => r.id);
    const key = randomUUID();
    const body = { agent_id: 'echo', input: { text: 'stalled wait' }, wait_ms: 60_000 };
    const first = await duringStall(() => post('/api/runs/wait', body, key));
    expect(first.status, JSON.stringify(first.body)).toBe(503);

    const retry = await post('/api/runs/wait', body, key);
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.status).toBe('completed');
    expect(retry.body.state).toMatchObject({ text: 'stalled wait', echoed: true });
    expect((await tenantRuns()).filter((r) => !before.includes(r.id)).map((r) => r.id)).toEqual([retry.body.id]);
  }, 120_000);

  it('an approval answered in the stall does not take effect; its retry is 200 and the run completes once', async () => {
    const started = await post('/api/runs/wait', { agent_id: 'human-review', input: { topic: 'stall' }, wait_ms: 60_000 }, randomUUID());
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect(started.body.status).toBe('interrupted');
    const approvalId: string = started.body.approval.id;

    const answer = { id: approvalId, approved: true, comment: 'in the stall' };
    const first = await duringStall(() => post('/api/approval/respond', answer));
    expect(first.status, JSON.stringify(first.body)).toBe(503);
    const pending = await call(`${api.url}/api/approvals/${approvalId}`);
    expect(pending.body.status).toBe('pending');
    expect((await call(`${api.url}/api/runs/${started.body.id}`)).body.status).toBe('interrupted');

    const retry = await post('/api/approval/respond', { ...answer, comment: 'after the stall' });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.status).toBe('approved');
    await waitFor('the run to complete', async () => (await call(`${api.url}/api/runs/${started.body.id}`)).body.status === 'completed', 60_000);
    const decided = await call(`${api.url}/api/approvals/${approvalId}`);
    expect(decided.body).toMatchObject({ status: 'approved', comment: 'after the stall' });
  }, 120_000);
});
