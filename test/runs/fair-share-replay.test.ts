import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import agents from '../fixtures/agents.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/**
 * A start retried with its Idempotency-Key while the tenant's queue is full answers as the
 * first one did (202, the same run, `Idempotent-Replayed`): the queued cap refuses new runs
 * only, and a replay stores nothing. Embedded: the one slot is held by a slow run; Redis: no
 * worker is alive, so every run waits.
 */

const ENV = { SERVICE_TENANT_MAX_QUEUED: '1', SERVICE_RATE_LIMIT: 'off', WORKER_CONCURRENCY: '1' };

const post = (url: string, body: unknown, key?: string) =>
  call(`${url}/api/runs`, { method: 'POST', json: body, headers: key === undefined ? {} : { 'Idempotency-Key': key } });

function scenarios(app: () => TestApi, holdSlot: (url: string) => Promise<void>): void {
  it('answers an idempotent replay while the queue is full as the first start, and still refuses a new start', async () => {
    const { url } = app();
    await holdSlot(url);
    const key = `start-${randomUUID()}`;
    const body = { agent_id: 'slow', input: { n: 1 } };
    const first = await post(url, body, key);
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    // The queue is full now: a new start is refused…
    const refused = await post(url, { agent_id: 'slow' });
    expect(refused.status, JSON.stringify(refused.body)).toBe(429);
    // …but a retry of the first is answered as it was.
    const replay = await post(url, body, key);
    expect(replay.status, JSON.stringify(replay.body)).toBe(202);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    // A key of a start never made is a new start: refused too.
    const fresh = await post(url, body, `start-${randomUUID()}`);
    expect(fresh.status, JSON.stringify(fresh.body)).toBe(429);
  });
}

describe('embedded backend', () => {
  let app: TestApi;
  beforeAll(async () => {
    process.env.SLOW_NODE_MS = '1000';
    app = await startTestApi({ env: ENV, agents: new AgentRegistry(agents) });
  });
  afterAll(async () => {
    await app?.close();
    delete process.env.SLOW_NODE_MS;
  });
  scenarios(
    () => app,
    async (url) => {
      const started = await post(url, { agent_id: 'slow' });
      expect(started.status).toBe(202);
      await waitFor('the slow run holds the slot', async () => (await call(`${url}/api/runs/${started.body.run_id}`)).body.status !== 'queued');
    },
  );
});

describe('Redis backend with no worker alive', () => {
  let redis: TestRedis;
  let app: TestApi;
  beforeAll(async () => {
    redis = await startRedis();
    app = await startTestApi({ redisUrl: redis.url, env: ENV, agents: new AgentRegistry(agents) });
  });
  afterAll(async () => {
    await app?.close();
    await redis?.stop();
  });
  scenarios(
    () => app,
    async () => {},
  );
});
