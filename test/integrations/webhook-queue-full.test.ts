import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import agents from '../fixtures/agents.js';
import { loadWebhooksConfig } from '../../src/integrations/webhook/config.js';
import { configuredReceiver } from '../../src/integrations/webhook/configured-receiver.js';
import { silentLogger } from '../../src/integrations/shared/silent-logger.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { mount } from '../support/chat.js';
import { waitFor } from '../support/wait.js';

/**
 * A delivery whose tenant's queue is full is refused as `POST /api/runs` is: 429 with
 * Retry-After and the error body (a sender retries it later), and nothing is stored. The
 * tenant may queue one run; embedded, the one slot is held by a waiter run; on Redis no worker
 * is alive, so every run waits.
 */

const ENV = { SERVICE_TENANT_MAX_QUEUED: '1', SERVICE_RATE_LIMIT: 'off', WORKER_CONCURRENCY: '1' };
const HOOK = { 'X-Webhook-Secret': 'hook-secret', 'X-Event-Type': 'push' };

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function scenarios(app: () => TestApi, holdSlot: (url: string) => Promise<string[]>): void {
  it('answers 429 with Retry-After and the error body past the queued cap, storing nothing', async () => {
    const { url, composition } = app();
    const held = await holdSlot(url);
    const receiver = configuredReceiver(loadWebhooksConfig({ WEBHOOK_ROUTES: 'push=echo', WEBHOOK_SECRET: 'hook-secret' }), composition.runs, silentLogger());
    const server = await mount(receiver.middleware());
    cleanup.push(() => server.close(), () => receiver.close());

    const first = await call(`${server.url}/webhook`, { method: 'POST', headers: HOOK, json: { n: 1 } });
    expect(first).toMatchObject({ status: 200, body: { status: 'ok', handled: 1 } });
    const sessionsBefore = (await call(`${url}/api/sessions?limit=500`)).body;
    const queueBefore = (await call(`${url}/api/queue`)).body;
    expect(queueBefore).toMatchObject({ queued: 1 });

    const refused = await call(`${server.url}/webhook`, { method: 'POST', headers: HOOK, json: { n: 2 } });
    expect(refused.status, JSON.stringify(refused.body)).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.body).toEqual({ error: { code: 'rate_limited', message: expect.stringMatching(/waiting for a worker/) } });
    expect((await call(`${url}/api/sessions?limit=500`)).body).toEqual(sessionsBefore);
    expect((await call(`${url}/api/queue`)).body).toEqual(queueBefore);

    const runs = await Promise.all((sessionsBefore.sessions as { id: string }[]).map(async (s) => (await call(`${url}/api/runs?session_id=${s.id}`)).body.runs as { id: string; status: string }[]));
    for (const run of runs.flat()) if (run.status === 'queued' || run.status === 'running') await call(`${url}/api/runs/${run.id}/cancel`, { method: 'POST' });
    for (const run of held) await waitFor('the held run ended', async () => (await call(`${url}/api/runs/${run}`)).body.status === 'cancelled');
  });
}

describe('embedded backend', () => {
  let app: TestApi;
  beforeAll(async () => {
    app = await startTestApi({ env: ENV, agents: new AgentRegistry(agents) });
  });
  afterAll(async () => {
    await app?.close();
  });
  scenarios(
    () => app,
    async (url) => {
      const started = await call(`${url}/api/runs`, { method: 'POST', json: { agent_id: 'waiter' } });
      expect(started.status).toBe(202);
      await waitFor('the waiter holds the slot', async () => (await call(`${url}/api/runs/${started.body.run_id}`)).body.status === 'running');
      return [started.body.run_id as string];
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
    async () => [],
  );
});
