import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startSecuredApi } from '../auth/secured-api.js';
import { openRaw, type RawStream } from '../support/sse.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { usePrivateRedis, useRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

const redis = useRedis();
const apps: TestApi[] = [];
const streams: RawStream[] = [];

afterEach(async () => {
  for (const stream of streams.splice(0)) stream.destroy();
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function app(env: Record<string, string>, redisUrl?: string): Promise<TestApi> {
  const started = await startTestApi({ env, ...(redisUrl ? { redisUrl } : {}) });
  apps.push(started);
  return started;
}

async function runToEnd(api: TestApi, input: Record<string, unknown> = { hello: 'world' }): Promise<{ run_id: string; session_id: string }> {
  const ticket = (await call(`${api.url}/api/runs`, { method: 'POST', json: { agent_id: 'echo', input } })).body;
  await waitFor('the run to complete', async () => (await call(`${api.url}/api/runs/${ticket.run_id}`)).body.status === 'completed');
  return ticket;
}

describe.each(['memory', 'redis'] as const)('DELETE /api/sessions on %s', (backend) => {
  it('removes a finished session with everything of it; 409 while a run is active; 404 after', async () => {
    const api = await app({}, backend === 'redis' ? redis.url : undefined);
    if (backend === 'redis') {
      // Queued runs wait for a worker: the first one shows the 409, then this process executes them.
      const queued = (await call(`${api.url}/api/runs`, { method: 'POST', json: { agent_id: 'echo' } })).body;
      const busy = await call(`${api.url}/api/sessions?session_id=${queued.session_id}`, { method: 'DELETE' });
      expect(busy.status).toBe(409);
      expect(busy.body.error.code).toBe('conflict');
      api.composition.startExecuting();
    }
    const { run_id, session_id } = await runToEnd(api);
    const deleted = await call(`${api.url}/api/sessions?session_id=${session_id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ session_id, status: 'deleted' });
    expect((await call(`${api.url}/api/sessions/state?session_id=${session_id}`)).status).toBe(404);
    expect((await call(`${api.url}/api/sessions/history?session_id=${session_id}`)).status).toBe(404);
    expect((await call(`${api.url}/api/traces?session_id=${session_id}`)).status).toBe(404);
    expect((await call(`${api.url}/api/runs/${run_id}`)).status).toBe(404);
    const listed = (await call(`${api.url}/api/sessions?limit=500`)).body.sessions.map((s: { id: string }) => s.id);
    expect(listed).not.toContain(session_id);
    const again = await call(`${api.url}/api/sessions?session_id=${session_id}`, { method: 'DELETE' });
    expect(again.status).toBe(404);
    expect((await call(`${api.url}/api/sessions`, { method: 'DELETE' })).status).toBe(400);
  });
});

describe('session expiry in the running process', () => {
  it('removes a session idle past SERVICE_SESSION_TTL (embedded: the API process sweeps)', async () => {
    const api = await app({ SERVICE_SESSION_TTL: '1' });
    const { session_id, run_id } = await runToEnd(api);
    await waitFor('the session to expire', async () => (await call(`${api.url}/api/sessions/state?session_id=${session_id}`)).status === 404, 15_000);
    expect((await call(`${api.url}/api/runs/${run_id}`)).status).toBe(404);
    expect(api.logs.some((line) => line.msg === 'idle sessions expired')).toBe(true);
  });
});

describe('event streams per caller and per tenant', () => {
  it('refuses a caller’s stream past SERVICE_SSE_MAX_PER_PRINCIPAL with 429, and admits one again after a close', async () => {
    const api = await app({ SERVICE_SSE_MAX_PER_PRINCIPAL: '2' });
    const open = async () => {
      const stream = await openRaw(`${api.url}/api/events/stream`);
      streams.push(stream);
      return stream;
    };
    const [first, second] = [await open(), await open()];
    expect([first.status, second.status]).toEqual([200, 200]);
    const refused = await call(`${api.url}/api/events/stream`);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limited');
    expect(refused.headers.get('retry-after')).toBe('5');
    first.destroy();
    await waitFor('the stream to be released', () => api.api.deps.streams.size === 1);
    expect((await open()).status).toBe(200);
  });

  it('refuses a tenant’s stream past SERVICE_SSE_MAX_PER_TENANT, whichever of its keys asks', async () => {
    const api = await startSecuredApi({
      SERVICE_AUTH: 'apikey',
      SERVICE_API_KEYS: 'key-a:viewer:acme,key-b:viewer:acme,key-c:viewer:globex',
      SERVICE_SSE_MAX_PER_TENANT: '2',
    });
    apps.push(api);
    for (const key of ['key-a', 'key-b']) {
      const stream = await openRaw(`${api.url}/api/events/stream`, { 'X-Api-Key': key });
      streams.push(stream);
      expect(stream.status).toBe(200);
    }
    expect((await call(`${api.url}/api/events/stream`, { headers: { 'X-Api-Key': 'key-a' } })).status).toBe(429);
    const other = await openRaw(`${api.url}/api/events/stream`, { 'X-Api-Key': 'key-c' });
    streams.push(other);
    expect(other.status).toBe(200);
  });
});

describe('request timeout', () => {
  it('cuts a request whose body does not arrive within SERVICE_REQUEST_TIMEOUT_MS; other requests go on', async () => {
    const api = await app({ SERVICE_REQUEST_TIMEOUT_MS: '1000' });
    const { port } = new URL(api.url);
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write('POST /api/runs HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a');
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(answer).toMatch(/"code":"bad_request".*SERVICE_REQUEST_TIMEOUT_MS/);
    expect((await call(`${api.url}/api/agents`)).status).toBe(200);
  });
});

describe('an unreachable or stalled Redis', () => {
  const privateRedis = usePrivateRedis();

  it('answers 503 within about a second while Redis is stalled, and serves again once it resumes', async () => {
    const api = await app({}, privateRedis.url);
    const ticket = (await call(`${api.url}/api/runs`, { method: 'POST', json: { agent_id: 'echo' } })).body;
    privateRedis.pause();
    try {
      const answer = await call(`${api.url}/api/runs/${ticket.run_id}`);
      // Redis stays stopped until the answer came, so the request did not wait for it: the command
      // timeout (1 s) answered it.
      expect(answer.status).toBe(503);
      expect(answer.body.error.code).toBe('unavailable');
      expect(answer.headers.get('retry-after')).toBe('1');
    } finally {
      privateRedis.resume();
    }
    await waitFor('the API to serve again', async () => (await call(`${api.url}/api/runs/${ticket.run_id}`)).status === 200);
  });

  it('logs that Redis is unreachable from the first failed connect, and when it is back', async () => {
    const api = await app({}, privateRedis.url);
    expect((await call(`${api.url}/api/sessions`)).status).toBe(200);
    await privateRedis.kill();
    await waitFor('the unreachable log line', () => api.logs.some((l) => /is unreachable/.test(String(l.msg))), 15_000);
    expect((await call(`${api.url}/api/sessions`)).status).toBe(503);
    await privateRedis.restart();
    await waitFor('the reachable-again log line', () => api.logs.some((l) => /reachable again/.test(String(l.msg))), 30_000);
    await waitFor('the API to serve again', async () => (await call(`${api.url}/api/sessions`)).status === 200);
  });
});
