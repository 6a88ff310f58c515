import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { UNSTARTED_ERROR } from '../../src/runtime/run-control.js';
import agents from '../fixtures/agents.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { startProcess, type AgentProcess } from '../support/processes.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/**
 * "A created run always has its job, or is never acknowledged": the API writes the run, then
 * adds its BullMQ job in another step. Here the second step really fails: the API's Redis user
 * loses the right to the queue's keys (ACL), so adding the job answers NOPERM while the run's
 * own keys stay writable. A start that fails so leaves no run queued without a job: without
 * an Idempotency-Key the run ends `failed` at once and its session takes the retry; with one,
 * the retry with the key enqueues the job of the run the first attempt wrote, which completes.
 */

const PASSWORD = 'api-secret';

describe('a start whose job cannot be enqueued after its run was written', () => {
  let redis: PrivateRedis;
  let admin: Redis;
  let app: TestApi;
  let worker: AgentProcess;
  let prefix: string;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    admin = new Redis(redis.url);
    await admin.call('ACL', 'SETUSER', 'api', 'on', `>${PASSWORD}`, '~*', '&*', '+@all');
    app = await startTestApi({ redisUrl: `redis://api:${PASSWORD}@127.0.0.1:${redis.port}`, agents: new AgentRegistry(agents) });
    prefix = app.config.SERVICE_KEY_PREFIX;
    worker = await startProcess({
      entry: 'src/main/worker.ts',
      portVariable: 'WORKER_PORT',
      env: { REDIS_URL: redis.url, SERVICE_KEY_PREFIX: prefix, AGENTS_MODULE: 'test/fixtures/agents.ts', LOG_LEVEL: 'info' },
      readyTimeoutMs: 60_000,
    });
  }, 90_000);

  afterAll(async () => {
    const code = await worker?.stop();
    await app?.close();
    admin?.disconnect();
    await redis?.stop();
    expect(code).toBe(0);
  });

  /**
   * The API's user may use every key but the run queue's, until `restore`: BullMQ's
   * (`<prefix>:runs:…`) not at all, the fair-share admission's where runs wait for their turn
   * (`<prefix>:admission:…`) only to read (the start's look at its tenant's queue passes, the
   * enqueue after the run was written fails).
   */
  async function withoutQueue<T>(request: () => Promise<T>): Promise<T> {
    await admin.call('ACL', 'SETUSER', 'api', 'resetkeys', `~${prefix}:{*`, `~${prefix}:[^ra]*`, `~${prefix}:r[^u]*`, `~${prefix}:a[^d]*`, `%R~${prefix}:ad*`);
    try {
      return await request();
    } finally {
      await admin.call('ACL', 'SETUSER', 'api', 'resetkeys', '~*');
    }
  }

  const start = (body: Record<string, unknown>, key?: string) =>
    call(`${app.url}/api/runs`, { method: 'POST', json: body, headers: key ? { 'Idempotency-Key': key } : {} });

  async function runsOf(sessionId: string): Promise<{ id: string; status: string; error?: string }[]> {
    return (await call(`${app.url}/api/runs?session_id=${sessionId}`)).body.runs;
  }

  const completed = (runId: string) =>
    waitFor(`run ${runId} to complete`, async () => (await call(`${app.url}/api/runs/${runId}`)).body.status === 'completed', 20_000);

  it('without an Idempotency-Key: the error answer leaves the run failed, not queued; the retry on its session is accepted', async () => {
    const session_id = `gap-${randomUUID()}`;
    const body = { agent_id: 'echo', input: { text: 'no job' }, session_id };
    const failed = await withoutQueue(() => start(body));
    expect(failed.status, JSON.stringify(failed.body)).toBe(500);
    const [run] = await runsOf(session_id);
    expect(run).toMatchObject({ status: 'failed', error: UNSTARTED_ERROR });

    const retry = await start(body);
    expect(retry.status, JSON.stringify(retry.body)).toBe(202);
    expect(retry.body.run_id).not.toBe(run!.id);
    await completed(retry.body.run_id);
    expect((await runsOf(session_id)).map((r) => r.status)).toEqual(['completed', 'failed']);
  });

  it('with an Idempotency-Key: the run stays for the retry, which enqueues its job; it completes, the only run', async () => {
    const key = randomUUID();
    const session_id = `gap-${randomUUID()}`;
    const body = { agent_id: 'echo', input: { text: 'job later' }, session_id };
    const failed = await withoutQueue(() => start(body, key));
    expect(failed.status, JSON.stringify(failed.body)).toBe(500);
    const [run] = await runsOf(session_id);
    expect(run!.status, JSON.stringify(run)).toBe('queued');
    expect(await app.backend.queue.hasLiveJob(run!)).toBe(false);

    const retry = await start(body, key);
    expect(retry.status, JSON.stringify(retry.body)).toBe(202);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual({ run_id: run!.id, session_id, status: 'queued' });
    await completed(run!.id);
    expect((await runsOf(session_id)).map((r) => r.id)).toEqual([run!.id]);
  });
});
