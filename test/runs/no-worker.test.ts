import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/*
 * REDIS_URL set and no worker process: runs wait in the queue. The API says so, once a minute in
 * its log and in the checks of /health/ready, while it stays ready (it can serve everything else).
 */

const NO_WORKER = /runs are queued but no worker is running/;

describe('on Redis, an API with no worker alive', () => {
  let redis: TestRedis;
  let app: TestApi;

  beforeAll(async () => {
    redis = await startRedis();
    app = await startTestApi({ redisUrl: redis.url });
  });
  afterAll(async () => {
    await app.close();
    await redis.stop();
  });

  const warnings = () => app.logs.filter((line) => line.level === 40 && NO_WORKER.test(String(line.msg)));

  it('stays ready, with "workers": "none" among its checks', async () => {
    const ready = await call(`${app.url}/health/ready`);
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { redis: 'ok', workers: 'none' } });
  });

  it('logs one warning when a run is queued, not one per run', async () => {
    const first = await call(`${app.url}/api/runs`, { method: 'POST', json: { agent_id: 'echo', input: { text: 'one' } } });
    expect(first.status).toBe(202);
    await waitFor('the warning', () => warnings().length > 0);
    for (const text of ['two', 'three']) {
      expect((await call(`${app.url}/api/runs`, { method: 'POST', json: { agent_id: 'echo', input: { text } } })).status).toBe(202);
    }
    // The runs after the first are queued and their check, if any, has answered: still one warning.
    await waitFor('the runs queued', async () => (await call(`${app.url}/api/runs?status=queued`)).body.runs.length === 3);
    expect(warnings()).toHaveLength(1);
    expect(String(warnings()[0]!.msg)).toMatch(/start one with `npm run start:worker`.*same REDIS_URL and SERVICE_KEY_PREFIX/);
    const queued = await call(`${app.url}/api/runs/${first.body.run_id}`);
    expect(queued.body.status).toBe('queued');
    // The run says why it waits: no worker is alive to take it.
    expect(queued.body.queue).toMatchObject({ tenant_queued: 3, workers: 0 });
  });

  it('once a worker runs (its heartbeat in Redis), the check says ok and the queued runs execute', async () => {
    app.composition.startExecuting();
    await waitFor('workers ok', async () => (await call(`${app.url}/health/ready`)).body.checks.workers === 'ok');
    await waitFor('the runs executed', async () => (await call(`${app.url}/api/runs?status=completed`)).body.runs.length === 3);
  });
});

describe('embedded (no REDIS_URL): the process is its own worker', () => {
  let app: TestApi;

  beforeAll(async () => {
    app = await startTestApi();
  });
  afterAll(async () => {
    await app.close();
  });

  it('has no workers check and never warns', async () => {
    const ready = await call(`${app.url}/health/ready`);
    expect(ready.body).toEqual({ status: 'ready', checks: { memory: 'ok' } });
    const run = await call(`${app.url}/api/runs`, { method: 'POST', json: { agent_id: 'echo', input: { text: 'hi' } } });
    await waitFor('the run completed', async () => (await call(`${app.url}/api/runs/${run.body.run_id}`)).body.status === 'completed');
    expect(app.logs.filter((line) => NO_WORKER.test(String(line.msg)))).toEqual([]);
  });
});
