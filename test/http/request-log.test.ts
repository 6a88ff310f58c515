import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineRoute } from '../../src/http/route.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { waitFor } from '../support/wait.js';

/**
 * The request log line and the HTTP metrics record the status actually sent. A JSON body that
 * cannot be serialized (what "Invalid string length" is for a body past V8's longest string;
 * here a BigInt, which JSON.stringify refuses the same way) is answered with the error body and
 * 500, logged as 500: not Koa's plain-text 500 after a log line that said 200.
 */
let app: TestApi;

beforeAll(async () => {
  app = await startTestApi({
    app: {
      extraRoutes: () => [
        defineRoute({
          method: 'GET',
          path: '/api/test/unserializable',
          operationId: 'unserializable',
          summary: 'Answers a body JSON cannot hold',
          tag: 'test',
          responses: {},
          handler: async () => ({ status: 200, body: { count: 10n } as unknown as Record<string, unknown> }),
        }),
      ],
    },
  });
});

afterAll(async () => {
  await app.close();
});

describe('the status of a body that fails to serialize', () => {
  it('is a 500 with the error body, and the request log and metrics say 500', async () => {
    const response = await call(`${app.url}/api/test/unserializable`, { headers: { 'X-Request-Id': 'unserializable-1' } });
    expect(response.status).toBe(500);
    expect(response.body).toEqual({ error: { code: 'internal', message: expect.any(String) } });
    expect(response.headers.get('x-request-id')).toBe('unserializable-1');
    await waitFor('the request log line', () => app.logs.some((line) => line.requestId === 'unserializable-1' && line.msg === 'request'));
    const logged = app.logs.filter((line) => line.requestId === 'unserializable-1' && line.msg === 'request');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ status: 500, route: '/api/test/unserializable' });
    expect(app.logs.some((line) => line.requestId === 'unserializable-1' && line.msg === 'request failed')).toBe(true);
    const metrics = await fetch(`${app.url}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/agentplane_http_requests_total\{method="GET",route="\/api\/test\/unserializable",status="500"\} 1/);
  });

  it('leaves other answers as they were: JSON objects, strings, empty bodies', async () => {
    const sessions = await call(`${app.url}/api/sessions`);
    expect(sessions.status).toBe(200);
    expect(sessions.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Array.isArray(sessions.body.sessions ?? sessions.body)).toBe(true);
    const missing = await call(`${app.url}/api/nope`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/^application\/json/);
  });
});
