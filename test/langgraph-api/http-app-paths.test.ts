import { request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildUiBundles } from '../../src/langgraph/ui-bundles.js';
import type { HttpApp } from '../../src/ports/http-app.js';
import { startTestApi, type TestApi } from '../support/app.js';

/*
 * One path for every decision: authentication, the API's routing and the `http.app` see the
 * same path, so a spelling of an app route that the API takes for a public one (`/ui/{name}/{file}`)
 * cannot reach the app without a credential. Requests go out with node:http, which sends the
 * target as written: fetch would normalise the spellings away before sending them.
 */

const UI_CONFIG = fileURLToPath(new URL('../fixtures/langgraph-ui/langgraph.json', import.meta.url));
const KEY = 'paths-user-key';
const SECRET = 'the secret of the app';

interface RawAnswer {
  status: number;
  body: string;
}

/** Sends `target` as the request line's target, as is (node:http checks it for control characters only). */
function raw(url: string, method: string, target: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  const { hostname, port, host } = new URL(url);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: hostname, port, method, path: target, headers: { host, ...headers }, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/** Spellings of `GET /custom/secret` (an app route that needs a key), each with what a caller without a key gets. */
const SPELLINGS: [target: string, status: number][] = [
  ['/custom/secret', 401],
  ['/ui/a/..\\..\\custom\\secret', 400],
  ['/ui/cards/..\\..\\custom\\secret', 400],
  ['/ui/a/..\\..\\custom\\secret?x=1', 400],
  ['/ui\\a\\..\\..\\custom\\secret', 400],
  ['/custom\\secret', 400],
  ['/ui/a/../../custom/secret', 400],
  ['/ui/a/b/../../../custom/secret', 400],
  ['/ui/a/%2e%2e/%2e%2e/custom/secret', 400],
  ['/ui/a/%2E%2E/%2E%2E/custom/secret', 400],
  ['/ui/a/.%2e/%2e./custom/secret', 400],
  ['/ui/a/%2e%2e\\%2e%2e\\custom\\secret', 400],
  ['/ui/a/%2E%2E%5C%2E%2E%5Ccustom%5Csecret', 404],
  ['/ui/a/..%5C..%5Ccustom%5Csecret', 404],
  ['/ui/a/%2e%2e%2f%2e%2e%2fcustom%2fsecret', 404],
  ['/ui/a/..%2F..%2Fcustom%2Fsecret', 404],
  ['/ui/a/%252e%252e/%252e%252e/custom/secret', 401],
  ['/ui/a/..;/..;/custom/secret', 401],
  ['//custom/secret', 401],
  ['/./custom/secret', 400],
  ['/custom/./secret', 400],
  ['/custom/secret/.', 400],
  ['/custom/x/../secret', 400],
  ['/custom//secret', 401],
  ['/custom/secret/', 401],
  ['/CUSTOM/SECRET', 401],
  ['/UI/a/..\\..\\custom\\secret', 400],
  ['/custom/%73ecret', 401],
  ['http://127.0.0.1/ui/a/..\\..\\custom\\secret', 400],
  ['http://127.0.0.1/custom/secret', 401],
];

describe('one path for authentication, routing and the http.app', () => {
  let api: TestApi;
  beforeAll(async () => {
    // A Hono app as langgraph.json's `http.app` (loadHttpApp checks its shape the same way, at run time).
    const httpApp = new Hono().get('/custom/secret', (c) => c.json({ secret: SECRET })) as unknown as HttpApp;
    api = await startTestApi({
      secured: true,
      env: { SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: `${KEY}:viewer:T1` },
      app: { httpApp, uiBundles: await buildUiBundles(UI_CONFIG) },
    });
  }, 60_000);
  afterAll(() => api?.close());

  it("answers the app's route to a caller with a key, and only then", async () => {
    const answer = await raw(api.url, 'GET', '/custom/secret', { 'x-api-key': KEY });
    expect([answer.status, answer.body]).toEqual([200, JSON.stringify({ secret: SECRET })]);
    expect((await raw(api.url, 'GET', '/ui/cards/entrypoint.js')).status).toBe(200);
  });

  it.each(SPELLINGS.flatMap(([target, status]) => ['GET', 'HEAD'].map((method) => [method, target, status] as const)))(
    '%s %s without a key is %d, never the app',
    async (method, target, status) => {
      const answer = await raw(api.url, method, target);
      expect(answer.body).not.toContain(SECRET);
      expect(answer.status).toBe(status);
      if (method === 'GET') expect(JSON.parse(answer.body)).toMatchObject({ error: { code: expect.any(String) } });
    },
  );

  it('a spelling that is not the path it resolves to is 400 with a JSON error, with a key too', async () => {
    const answer = await raw(api.url, 'GET', '/ui/a/..\\..\\custom\\secret', { 'x-api-key': KEY });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toEqual({ error: { code: 'bad_request', message: expect.stringMatching(/^The path .* is not in its normal form/) } });
  });

  it.each([['a b'], ['[::1'], ['127.0.0.1:99999'], ['evil.example/ui/a'], ['user@127.0.0.1']])(
    'a malformed Host header (%s) is 400 with a JSON error, on the app route and the API',
    async (host) => {
      for (const target of ['/custom/secret', '/ok']) {
        const answer = await raw(api.url, 'GET', target, { host, 'x-api-key': KEY });
        expect(answer.status).toBe(400);
        expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'bad_request' } });
      }
    },
  );
});
