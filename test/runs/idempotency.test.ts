import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDEMPOTENCY_TTL_MS } from '../../src/domain/idempotency.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import agents from '../fixtures/agents.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis.js';
import { onBothBackends } from './backends.js';
import { waitRun, type RunHarness } from './scenarios.js';

/**
 * `Idempotency-Key` on POST /api/runs, /api/runs/wait and /api/runs/stream, on both backends:
 * the same key and fields answer the first start's run (marked `Idempotent-Replayed: true`),
 * other fields 422, a refused start stores nothing, and keys are scoped to tenant and caller.
 */

const key = () => `start-${randomUUID()}`;

function post(url: string, path: string, body: unknown, idempotencyKey?: string, headers: Record<string, string> = {}) {
  return call(`${url}${path}`, {
    method: 'POST',
    json: body,
    headers: { ...(idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey }), ...headers },
  });
}

async function runsOfSession(url: string, sessionId: string): Promise<{ id: string; status: string }[]> {
  const page = await call(`${url}/api/runs?session_id=${sessionId}`);
  expect(page.status, JSON.stringify(page.body)).toBe(200);
  return page.body.runs;
}

onBothBackends((name, harness) => {
  describe(`Idempotency-Key on run starts: ${name}`, () => {
    const url = () => harness().url;

    it('answers a retry with the same key and fields with the first run: 202, same ids, Idempotent-Replayed; the run runs once', async () => {
      const k = key();
      const body = { agent_id: 'echo', input: { text: 'once' } };
      const first = await post(url(), '/api/runs', body, k);
      expect(first.status, JSON.stringify(first.body)).toBe(202);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      const again = await post(url(), '/api/runs', { input: { text: 'once' }, agent_id: 'echo' }, k);
      expect(again.status, JSON.stringify(again.body)).toBe(202);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.headers.get('location')).toBe(`/api/runs/${first.body.run_id}`);
      await waitRun(harness() as RunHarness, first.body.run_id, 'completed');
      // Once more after it completed: still the same answer, and still one run on the session.
      const late = await post(url(), '/api/runs', body, k);
      expect(late.status).toBe(202);
      expect(late.body).toEqual(first.body);
      expect((await runsOfSession(url(), first.body.session_id)).map((r) => r.id)).toEqual([first.body.run_id]);
    });

    it('answers concurrent starts with one key with one run', async () => {
      const k = key();
      const answers = await Promise.all(Array.from({ length: 6 }, () => post(url(), '/api/runs', { agent_id: 'echo', input: { text: 'race' } }, k)));
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 202));
      const ids = new Set(answers.map((a) => `${a.body.run_id} ${a.body.session_id}`));
      expect(ids.size).toBe(1);
      expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(5);
      const { run_id, session_id } = answers[0]!.body;
      await waitRun(harness() as RunHarness, run_id, 'completed');
      expect((await runsOfSession(url(), session_id)).map((r) => r.id)).toEqual([run_id]);
    });

    it('answers the same key with other fields 422 idempotency_key_reused and starts nothing', async () => {
      const k = key();
      const first = await post(url(), '/api/runs', { agent_id: 'echo', input: { text: 'a' } }, k);
      expect(first.status).toBe(202);
      for (const other of [
        { agent_id: 'echo', input: { text: 'b' } },
        { agent_id: 'echo', input: { text: 'a' }, timeout_ms: 60_000 },
        { agent_id: 'echo', input: { text: 'a' }, session_id: first.body.session_id },
        { agent_id: 'slow', input: { text: 'a' } },
      ]) {
        const reused = await post(url(), '/api/runs', other, k);
        expect(reused.status, JSON.stringify(other)).toBe(422);
        expect(reused.body.error.code).toBe('idempotency_key_reused');
        expect(reused.body.error.message).toMatch(/Idempotency-Key/);
      }
      expect((await runsOfSession(url(), first.body.session_id)).map((r) => r.id)).toEqual([first.body.run_id]);
    });

    it('without a key, the same request twice starts two runs', async () => {
      const session_id = `idem-${randomUUID()}`;
      const one = await post(url(), '/api/runs', { agent_id: 'echo', input: { text: 'x' }, session_id });
      expect(one.status).toBe(202);
      await waitRun(harness() as RunHarness, one.body.run_id, 'completed');
      const two = await post(url(), '/api/runs', { agent_id: 'echo', input: { text: 'x' }, session_id });
      expect(two.status).toBe(202);
      expect(two.body.run_id).not.toBe(one.body.run_id);
      expect(two.headers.get('idempotent-replayed')).toBeNull();
    });

    it('stores nothing for a refused start: after a 409, the same key starts the run once the session is free', async () => {
      const session_id = `idem-${randomUUID()}`;
      const busy = await post(url(), '/api/runs/wait', { agent_id: 'human-review', input: { topic: 't' }, session_id, wait_ms: 20_000 });
      expect(busy.status, JSON.stringify(busy.body)).toBe(200);
      expect(busy.body.status).toBe('interrupted');
      const k = key();
      const body = { agent_id: 'human-review', input: { topic: 'again' }, session_id };
      const refused = await post(url(), '/api/runs', body, k);
      expect(refused.status).toBe(409);
      expect((await call(`${url()}/api/runs/${busy.body.id}/cancel`, { method: 'POST' })).status).toBe(200);
      const started = await post(url(), '/api/runs', body, k);
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      expect(started.headers.get('idempotent-replayed')).toBeNull();
      expect(started.body.run_id).not.toBe(busy.body.id);
    });

    it('refuses a malformed key with 400 naming the header, and starts nothing', async () => {
      const session_id = `idem-${randomUUID()}`;
      for (const bad of ['x'.repeat(256), 'has space', 'ünïcode']) {
        const refused = await post(url(), '/api/runs', { agent_id: 'echo', session_id }, bad);
        expect(refused.status, bad).toBe(400);
        expect(refused.body.error.code).toBe('bad_request');
        expect(refused.body.error.message).toMatch(/^headers\.idempotency-key: /);
      }
      expect((await call(`${url()}/api/sessions/${session_id}`)).status).toBe(404);
    });

    it('replays across the start forms: /wait with the key of a start answers the run once it stopped, with its state', async () => {
      const k = key();
      const fields = { agent_id: 'echo', input: { text: 'forms' } };
      const started = await post(url(), '/api/runs', fields, k);
      expect(started.status).toBe(202);
      await waitRun(harness() as RunHarness, started.body.run_id, 'completed');
      // The run completed before this request: answered at once, not after wait_ms.
      const waited = await post(url(), '/api/runs/wait', { ...fields, wait_ms: 300_000 }, k);
      expect(waited.status, JSON.stringify(waited.body)).toBe(200);
      expect(waited.headers.get('idempotent-replayed')).toBe('true');
      expect(waited.body).toMatchObject({ id: started.body.run_id, session_id: started.body.session_id, status: 'completed' });
      expect(waited.body.state).toMatchObject({ text: 'forms' });

      // /stream with the key: the run's ids, marked a replay; it already stopped, so the stream just ends.
      const streamed = await fetch(`${url()}/api/runs/stream`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Idempotency-Key': k },
        body: JSON.stringify(fields),
      });
      expect(streamed.status).toBe(200);
      expect(streamed.headers.get('x-run-id')).toBe(started.body.run_id);
      expect(streamed.headers.get('idempotent-replayed')).toBe('true');
      expect(await streamed.text()).not.toMatch(/^data:/m);
      expect((await runsOfSession(url(), started.body.session_id)).map((r) => r.id)).toEqual([started.body.run_id]);
    });

    it('a /wait retried while its run is still going waits for that run', async () => {
      const k = key();
      const body = { agent_id: 'human-review', input: { topic: 'wait twice' }, wait_ms: 20_000 };
      const [first, second] = await Promise.all([post(url(), '/api/runs/wait', body, k), post(url(), '/api/runs/wait', body, k)]);
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(second.body.id).toBe(first.body.id);
      expect(first.body.status).toBe('interrupted');
      expect(second.body.approval?.id).toBe(first.body.approval.id);
    });
  });
});

describe('the scope of an Idempotency-Key: tenant and caller', () => {
  const API_KEYS = 'alpha-one:user:alpha,alpha-two:user:alpha,beta-one:user:beta';
  let redis: PrivateRedis;
  const apps: Record<string, TestApi> = {};
  beforeAll(async () => {
    redis = await startPrivateRedis();
    const env = { SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: API_KEYS };
    apps.memory = await startTestApi({ secured: true, env, agents: new AgentRegistry(agents) });
    apps.redis = await startTestApi({ secured: true, env, redisUrl: redis.url, agents: new AgentRegistry(agents) });
  });
  afterAll(async () => {
    await Promise.all(Object.values(apps).map((app) => app.close()));
    await redis?.stop();
  });

  it.each(['memory', 'redis'])('%s: one key from two callers, or two tenants, is two starts; from one caller, one', async (backend) => {
    const url = apps[backend]!.url;
    const k = key();
    const body = { agent_id: 'echo', input: { text: 'scoped' } };
    const as = (apiKey: string) => post(url, '/api/runs', body, k, { 'X-Api-Key': apiKey });
    const a1 = await as('alpha-one');
    const a1again = await as('alpha-one');
    const a2 = await as('alpha-two');
    const b1 = await as('beta-one');
    for (const answer of [a1, a1again, a2, b1]) expect(answer.status, JSON.stringify(answer.body)).toBe(202);
    expect(a1again.body.run_id).toBe(a1.body.run_id);
    expect(a1again.headers.get('idempotent-replayed')).toBe('true');
    expect(new Set([a1.body.run_id, a2.body.run_id, b1.body.run_id]).size).toBe(3);
    expect(a2.headers.get('idempotent-replayed')).toBeNull();
    expect(b1.headers.get('idempotent-replayed')).toBeNull();
  });

  it('redis: keeps each key as one hash in the tenant\'s slot that expires after 24 h', async () => {
    const k = key();
    const started = await post(apps.redis!.url, '/api/runs', { agent_id: 'echo' }, k, { 'X-Api-Key': 'beta-one' });
    expect(started.status).toBe(202);
    const admin = new Redis(redis.url);
    try {
      const stored = await admin.keys(`${apps.redis!.config.SERVICE_KEY_PREFIX}:{beta}:idempotency:*`);
      expect(stored.length).toBeGreaterThan(0);
      const records = await Promise.all(stored.map((name) => admin.hgetall(name)));
      const record = records.find((r) => r.run_id === started.body.run_id);
      expect(record?.fingerprint).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const ttl = await admin.pttl(stored[records.indexOf(record!)]!);
      expect(ttl).toBeGreaterThan(IDEMPOTENCY_TTL_MS - 600_000);
      expect(ttl).toBeLessThanOrEqual(IDEMPOTENCY_TTL_MS);
    } finally {
      admin.disconnect();
    }
  });
});
