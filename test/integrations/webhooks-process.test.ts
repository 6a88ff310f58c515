import { spawnSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/main/worker-server.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { startProcess, type AgentProcess } from '../support/processes.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/*
 * `npm run start:webhooks` as real processes (two receivers on one Redis, beside an API and a
 * run worker in this process): a replayed delivery runs once across receivers; the receiver
 * answers like the API (request ids, JSON errors, probes, lint-clean /metrics, the global limit).
 */

const secretBytes = randomBytes(32);
const SIGNING_SECRET = `whsec_${secretBytes.toString('base64')}`;

function signed(id: string, timestampSec: number, body: string): Record<string, string> {
  const signature = createHmac('sha256', secretBytes).update(`${id}.${timestampSec}.${body}`).digest('base64');
  return {
    'Content-Type': 'application/json',
    'X-Event-Type': 'deploy',
    'webhook-id': id,
    'webhook-timestamp': String(timestampSec),
    'webhook-signature': `v1,${signature}`,
  };
}

const nowSec = (): number => Math.floor(Date.now() / 1000);

let redis: TestRedis;
let api: TestApi;
let prefix: string;
const receivers: AgentProcess[] = [];

function startReceiver(env: Record<string, string> = {}): Promise<AgentProcess> {
  return startProcess({
    entry: 'src/main/webhooks.ts',
    portVariable: 'WEBHOOK_PORT',
    // Two receivers compile their sources at once: on a busy 2-core CI machine that took more
    // than the default 20 s. A bound, not a timing.
    readyTimeoutMs: 60_000,
    env: {
      REDIS_URL: redis.url,
      SERVICE_KEY_PREFIX: prefix,
      SERVICE_SHUTDOWN_DELAY_MS: '0',
      WEBHOOK_HOST: '127.0.0.1',
      WEBHOOK_SIGNATURE: 'standard-webhooks',
      WEBHOOK_SIGNING_SECRET: SIGNING_SECRET,
      WEBHOOK_ROUTES: 'deploy=echo',
      LOG_LEVEL: 'info',
      ...env,
    },
  });
}

beforeAll(async () => {
  redis = await startRedis();
  prefix = uniquePrefix('receivers');
  api = await startTestApi({ redisUrl: redis.url, env: { SERVICE_KEY_PREFIX: prefix } });
  createWorker(api.composition);
  receivers.push(...(await Promise.all([startReceiver(), startReceiver()])));
}, 150_000);
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.stop()));
  await api?.close();
  await redis?.stop();
});

async function runsOfDeploy(version: string): Promise<number> {
  const sessions = (await call(`${api.url}/api/sessions?limit=100`)).body.sessions as { id: string }[];
  let count = 0;
  for (const session of sessions) {
    const state = await call(`${api.url}/api/sessions/state?session_id=${session.id}`);
    if (state.body.state?.webhook?.payload?.version === version) count += 1;
  }
  return count;
}

describe('webhook receiver process', () => {
  it('handles a delivery sent 20 times, to two receivers, once: one 200 with a run, then 200 duplicate', async () => {
    const body = JSON.stringify({ version: 'replayed-1' });
    const headers = signed('msg_replay_1', nowSec(), body);
    const answers = [];
    for (let i = 0; i < 20; i += 1) {
      const receiver = receivers[i % 2]!;
      answers.push(await call(`${receiver.url}/webhook`, { method: 'POST', headers, body }));
    }
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(answers[0]!.body).toEqual({ status: 'ok', handled: 1 });
    for (const answer of answers.slice(1)) expect(answer.body).toEqual({ status: 'ok', handled: 0, duplicate: true });
    await waitFor('the run of the delivery', async () => (await runsOfDeploy('replayed-1')) === 1, 15_000);
    // Another delivery (its own id) is handled as usual.
    const other = JSON.stringify({ version: 'replayed-2' });
    expect((await call(`${receivers[1]!.url}/webhook`, { method: 'POST', headers: signed('msg_replay_2', nowSec(), other), body: other })).body).toEqual({
      status: 'ok',
      handled: 1,
    });
    await waitFor('the run of the second delivery', async () => (await runsOfDeploy('replayed-2')) === 1, 15_000);
    expect(await runsOfDeploy('replayed-1')).toBe(1);
  });

  it('refuses a timestamp 5 minutes ahead, and accepts a few seconds of skew', async () => {
    const body = JSON.stringify({ version: 'future' });
    const ahead = await call(`${receivers[0]!.url}/webhook`, { method: 'POST', headers: signed('msg_future_1', nowSec() + 300, body), body });
    expect(ahead.status).toBe(401);
    expect(ahead.body.error.code).toBe('unauthorized');
    const skewed = await call(`${receivers[0]!.url}/webhook`, { method: 'POST', headers: signed('msg_future_2', nowSec() + 10, body), body });
    expect(skewed.status).toBe(200);
  });

  it('answers unknown paths and a 5,000-deep body with the JSON error body and a request id', async () => {
    const url = receivers[0]!.url;
    const missing = await call(`${url}/nowhere`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: { code: 'not_found', message: 'No route matches GET /nowhere.' } });
    expect(missing.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const body = '['.repeat(5000) + ']'.repeat(5000);
    const deep = await call(`${url}/webhook`, { method: 'POST', headers: { ...signed('msg_deep', nowSec(), body), 'X-Request-Id': 'deep-1' }, body });
    expect(deep.status).toBe(400);
    expect(deep.body).toEqual({ error: { code: 'bad_request', message: 'body: JSON nested deeper than 64 levels.' } });
    expect(deep.headers.get('x-request-id')).toBe('deep-1');
  });

  it('serves probes and a /metrics that promtool passes, with the deliveries labelled /webhook', async () => {
    const url = receivers[0]!.url;
    expect((await call(`${url}/health/live`)).status).toBe(200);
    const ready = await call(`${url}/health/ready`);
    expect(ready).toMatchObject({ status: 200, body: { status: 'ready', checks: { redis: 'ok' } } });
    const text = await (await fetch(`${url}/metrics`)).text();
    expect(text).toMatch(/agentplane_http_requests_total\{method="POST",route="\/webhook",status="200"\} \d+/);
    const lint = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    if (lint.error) throw new Error(`promtool is needed for this test (apt-get install -y prometheus): ${lint.error.message}`);
    expect({ status: lint.status, output: `${lint.stdout}${lint.stderr}`.trim() }).toEqual({ status: 0, output: '' });
  });

  it('applies the global rate limit (SERVICE_RATE_LIMIT) to deliveries, not to probes', async () => {
    const limited = await startReceiver({ SERVICE_RATE_LIMIT: '3/60s', SERVICE_KEY_PREFIX: uniquePrefix('limited') });
    try {
      const statuses = [];
      for (let i = 0; i < 4; i += 1) {
        const body = JSON.stringify({ version: `limited-${i}` });
        statuses.push((await call(`${limited.url}/webhook`, { method: 'POST', headers: signed(`msg_limited_${i}`, nowSec(), body), body })).status);
      }
      expect(statuses.slice(0, 3).every((s) => s !== 429)).toBe(true);
      const refused = await call(`${limited.url}/webhook`, { method: 'POST', json: {} });
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('rate_limited');
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(statuses[3]).toBe(429);
      expect((await call(`${limited.url}/health/ready`)).status).toBe(200);
    } finally {
      await limited.stop();
    }
  });
});
