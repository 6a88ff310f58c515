import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineRoute } from '../../src/http/route.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { startRedis, type TestRedis } from '../support/redis.js';

const T = 'DefaultTenant';
let redis: TestRedis;
let app: TestApi;
let sessionId: string;

beforeAll(async () => {
  redis = await startRedis();
  app = await startTestApi({
    redisUrl: redis.url,
    app: {
      extraRoutes: () => [
        defineRoute({
          method: 'GET',
          path: '/api/test/explode',
          operationId: 'explode',
          summary: 'Throws',
          tag: 'test',
          responses: {},
          handler: async () => {
            throw new Error('database password is hunter2');
          },
        }),
      ],
    },
  });
  sessionId = randomUUID();
  await app.backend.store.runs.createRun(T, { run_id: randomUUID(), session_id: sessionId, agent_id: 'echo' });
  await app.backend.store.sessions.appendCheckpoint(T, sessionId, { patch: { a: 1 }, node_id: 'receive' });
});

afterAll(async () => {
  await app.close();
  await redis.stop();
});

function expectErrorShape(body: unknown, code: string): void {
  expect(body).toEqual({ error: { code, message: expect.any(String) } });
}

/** Raw request so the test controls body bytes and headers exactly. */
function raw(path: string, body: Buffer | string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(`${app.url}${path}`, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('malformed input changes nothing', () => {
  const json = { 'Content-Type': 'application/json' };
  const cases: [string, Buffer | string, Record<string, string>, number, string][] = [
    ['invalid JSON', '{"state": {', json, 400, 'bad_request'],
    ['state missing', '{}', json, 400, 'bad_request'],
    ['state an array', '{"state": [1, 2]}', json, 400, 'bad_request'],
    ['state a string', '{"state": "x"}', json, 400, 'bad_request'],
    ['state null', '{"state": null}', json, 400, 'bad_request'],
    ['a JSON array body', '[{"state": {}}]', json, 400, 'bad_request'],
    ['a JSON string body', '"state"', json, 400, 'bad_request'],
    ['an unknown top-level field', '{"state": {}, "extra": 1}', json, 400, 'bad_request'],
    ['a 2 MiB body', JSON.stringify({ state: { big: 'x'.repeat(2 * 1024 * 1024) } }), json, 413, 'payload_too_large'],
    ['a wrong content type', '{"state": {"b": 1}}', { 'Content-Type': 'text/plain' }, 415, 'unsupported_media_type'],
    ['form encoding', 'state=1', { 'Content-Type': 'application/x-www-form-urlencoded' }, 415, 'unsupported_media_type'],
  ];

  it.each(cases)('%s', async (_name, body, headers, status, code) => {
    const before = (await app.backend.store.sessions.listCheckpoints(T, sessionId, { limit: 500, offset: 0, maxBytes: Infinity })).checkpoints;
    const response = await raw(`/api/sessions/state?session_id=${sessionId}`, body, headers);
    expect(response.status).toBe(status);
    expectErrorShape(response.body, code);
    expect((await app.backend.store.sessions.listCheckpoints(T, sessionId, { limit: 500, offset: 0, maxBytes: Infinity })).checkpoints).toEqual(before);
  });

  it('says when the body is not JSON', async () => {
    const response = await raw(`/api/sessions/state?session_id=${sessionId}`, '{bad', json);
    expect(response.body.error.message).toMatch(/^The request body is not valid JSON/);
  });

  it('names the offending field', async () => {
    const response = await raw(`/api/sessions/state?session_id=${sessionId}`, '{"state": [1]}', json);
    expect(response.body.error.message).toMatch(/^body\.state: /);
  });

  it.each(['abc', '-1', '0', '501'])('limit=%s is a 400 and lists nothing', async (limit) => {
    const response = await call(`${app.url}/api/sessions?limit=${limit}`);
    expect(response.status).toBe(400);
    expectErrorShape(response.body, 'bad_request');
  });

  it('a session_id that is not an id is a 400', async () => {
    const response = await call(`${app.url}/api/sessions/state?session_id=${encodeURIComponent('a b/c')}`);
    expect(response.status).toBe(400);
  });

  it('a repeated query parameter is a 400', async () => {
    const response = await call(`${app.url}/api/sessions?limit=1&limit=2`);
    expect(response.status).toBe(400);
  });
});

describe('the error model', () => {
  it('answers an unknown route 404 in the contract shape, with a request id', async () => {
    const response = await call(`${app.url}/api/nothing-here`);
    expect(response.status).toBe(404);
    expectErrorShape(response.body, 'not_found');
    expect(response.headers.get('x-request-id')).toMatch(/.+/);
  });

  it('echoes a client request id', async () => {
    const response = await call(`${app.url}/healthz`, { headers: { 'X-Request-Id': 'abc-123' } });
    expect(response.headers.get('x-request-id')).toBe('abc-123');
  });

  it('answers a known path with another method 405 with Allow', async () => {
    const response = await call(`${app.url}/api/sessions/state`, { method: 'DELETE' });
    expect(response.status).toBe(405);
    expectErrorShape(response.body, 'method_not_allowed');
    expect(response.headers.get('allow')).toContain('GET');
    expect(response.headers.get('allow')).toContain('POST');
  });

  it('answers a thrown error 500 without its message or stack, logs it with the request id, and keeps serving', async () => {
    const response = await call(`${app.url}/api/test/explode`, { headers: { 'X-Request-Id': 'boom-1' } });
    expect(response.status).toBe(500);
    expect(response.body).toEqual({ error: { code: 'internal', message: 'An internal error occurred.' } });
    expect(JSON.stringify(response.body)).not.toContain('hunter2');
    const logged = app.logs.find((line) => line.requestId === 'boom-1' && line.msg === 'request failed');
    expect(logged).toBeDefined();
    expect((await call(`${app.url}/healthz`)).status).toBe(200);
  });
});
