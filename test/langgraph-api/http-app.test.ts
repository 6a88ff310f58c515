import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { Client as Client2 } from '@langchain/langgraph-sdk-2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { loadHttpApp } from '../../src/langgraph/http-app.js';
import { createLogger } from '../../src/main/logger.js';
import { loadAgentsAndGraphs } from '../../src/main/process.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startProcess, type AgentProcess } from '../support/processes.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/*
 * The `http.app` of langgraph.json (a real Hono app, test/fixtures/langgraph-http/app.ts) in
 * front of the API, as LangGraph's server mounts it: its routes (over the API's), its middleware
 * around the API's answers, a body it reads still read whole by the API; run starts give graphs
 * the request's x-* headers in `configurable`, as there. In process on memory and Redis, and as
 * `npm start` runs it (the SDK's `new Client()` in the app reaching the API it is mounted in;
 * its routes behind the API's authentication).
 */

const FIXTURES = fileURLToPath(new URL('../fixtures/langgraph-http/', import.meta.url));
const CONFIG = join(FIXTURES, 'langgraph.json');

async function fetchJson(url: string, init?: RequestInit): Promise<{ status: number; body: unknown; headers: Headers }> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) };
}

describe.each(['memory', 'redis'] as const)('http.app in front of the API (%s)', (backend) => {
  let redis: TestRedis | undefined;
  let api: TestApi;
  beforeAll(async () => {
    if (backend === 'redis') redis = await startRedis();
    const registry = await loadAgentsAndGraphs(loadConfig({ SERVICE_LANGGRAPH_JSON: CONFIG }), undefined, createLogger('silent'));
    api = await startTestApi({ agents: registry, app: { httpApp: await loadHttpApp(CONFIG) }, ...(redis ? { redisUrl: redis.url } : {}) });
    api.composition.startExecuting();
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await redis?.stop();
  });

  it("serves the app's routes, with their status, headers and errors; its route wins over the API's of the same path", async () => {
    const hello = await fetchJson(`${api.url}/hello/ada`, { headers: { 'x-caller': 'test' } });
    expect(hello).toMatchObject({ status: 201, body: { hello: 'ada', caller: 'test' } });
    expect(hello.headers.get('x-route')).toBe('hello');
    expect(hello.headers.get('x-app-middleware')).toBe('yes');
    expect(await fetchJson(`${api.url}/echo`, { method: 'POST', body: JSON.stringify({ a: [1, 2] }), headers: { 'content-type': 'application/json' } })).toMatchObject({
      status: 200,
      body: { got: { a: [1, 2] } },
    });
    const fails = await fetch(`${api.url}/fails`);
    expect([fails.status, await fails.text()]).toEqual([418, 'a teapot']);
    expect(await fetchJson(`${api.url}/threads/mine`)).toMatchObject({ status: 200, body: { overridden: true } });
    // A path neither serves: the API's 404.
    expect(await fetchJson(`${api.url}/no/such/path`)).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
  });

  it("streams a streamed answer as it is written, not at its end", async () => {
    const response = await fetch(`${api.url}/count`);
    const chunks: string[] = [];
    const decoder = new TextDecoder();
    const reader = response.body!.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) chunks.push(decoder.decode(read.value));
    expect(chunks.join('')).toBe('line 0\nline 1\nline 2\n');
    expect(chunks.length).toBeGreaterThan(1);
  });

  it("wraps the API's routes: its middleware sets headers on the API's answer, or answers instead", async () => {
    const info = await fetchJson(`${api.url}/info`);
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({ context: 'js' });
    expect(info.headers.get('x-app-middleware')).toBe('yes');
    expect(await fetchJson(`${api.url}/info?intercept`)).toMatchObject({ status: 200, body: { intercepted: '/info' } });
    // An error of the API keeps its body and status under the app's middleware.
    const missing = await fetchJson(`${api.url}/threads/00000000-0000-4000-8000-000000000000`);
    expect(missing).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
  });

  it("a run start whose body the app read is still read whole by the API; the request's x-* headers reach the graph's configurable (SDK 1.x and 2.0)", async () => {
    const client = new Client({ apiUrl: api.url, apiKey: null, defaultHeaders: { 'x-team': 'blue', 'user-agent': 'agentplane-test' } });
    const thread = await client.threads.create();
    expect(await client.runs.wait(thread.thread_id, 'headers', { input: { seen: 'x' } })).toEqual({ seen: 'blue', agent: 'agentplane-test' });
    const client2 = new Client2({ apiUrl: api.url, apiKey: null, defaultHeaders: { 'x-team': 'green' } });
    expect(await client2.runs.wait(null, 'headers', { input: {} })).toMatchObject({ seen: 'green' });
    const refused = await fetchJson(`${api.url}/runs/wait`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'headers', input: { seen: 'forbidden' } }),
    });
    expect(refused).toMatchObject({ status: 403, body: { refused: 'by the app' } });
  });

  it("a run webhook that is a path goes to the app, as LangGraph's server posts it to its own", async () => {
    const client = new Client({ apiUrl: api.url, apiKey: null });
    const thread = await client.threads.create();
    const values = await client.runs.wait(thread.thread_id, 'headers', { input: { seen: 'hooked' }, webhook: '/hooks/runs' });
    const received = await waitFor(
      'the webhook in the app',
      async () => ((await fetchJson(`${api.url}/hooks/runs`)).body as { body: { thread_id: string; status: string; values: unknown }; signed: string | null }[]).find((r) => r.body.thread_id === thread.thread_id),
      15_000,
    );
    expect(received.body).toMatchObject({ status: 'success', values });
    expect(received.signed).toMatch(/^msg_/);
  });
});

describe('a path webhook without an http.app', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  it('is refused at the start (400), nothing stored', async () => {
    const client = new Client({ apiUrl: api.url, apiKey: null });
    const thread = await client.threads.create();
    const refused = await fetchJson(`${api.url}/threads/${thread.thread_id}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'echo', input: {}, webhook: '/hooks/runs' }),
    });
    expect(refused).toMatchObject({ status: 400, body: { error: { code: 'bad_request', message: 'webhook: a path, which is delivered to the http.app of langgraph.json, and there is none.' } } });
    expect(await client.runs.list(thread.thread_id)).toEqual([]);
  });
});

describe('http.app as `npm start` serves it', () => {
  let api: AgentProcess;
  const KEY = 'httpapp-user-key';
  beforeAll(async () => {
    api = await startProcess({
      entry: 'src/main/api.ts',
      env: { SERVICE_LANGGRAPH_JSON: CONFIG, SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: `${KEY}:user:T1`, REDIS_URL: undefined, AGENTS_MODULE: undefined },
    });
  }, 60_000);
  afterAll(() => api?.stop());

  it("puts the app's routes behind the API's authentication; public routes stay public", async () => {
    expect(await fetchJson(`${api.url}/hello/ada`)).toMatchObject({ status: 401, body: { error: { code: 'unauthorized' } } });
    expect(await fetchJson(`${api.url}/hello/ada`, { headers: { 'x-api-key': KEY } })).toMatchObject({ status: 201, body: { hello: 'ada' } });
    const info = await fetchJson(`${api.url}/info`);
    expect([info.status, info.headers.get('x-app-middleware')]).toEqual([200, 'yes']);
  });

  it("the SDK's Client without apiUrl, in the app, calls the API it is mounted in", async () => {
    expect(await fetchJson(`${api.url}/via-sdk`, { headers: { 'x-api-key': KEY } })).toMatchObject({ status: 200, body: { values: { seen: 'loopback' } } });
  });
});

describe('http.app that cannot be served', () => {
  const work = mkdtempSync(join(tmpdir(), 'agentplane-httpapp-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it.each([
    ['an export that is not a Hono app', 'export const app = { answer: 42 };\n', /"http\.app" \(\.\/app\.mjs:app\): the export "app" is not a Hono app \(no fetch\(\) and notFound\(\)\)$/],
    ['a missing export', 'export const other = 1;\n', /"http\.app" \(\.\/app\.mjs:app\): .*app\.mjs has no export "app" \(its exports: other\)$/],
  ])('%s: one ConfigError line', async (_name, source, message) => {
    const folder = mkdtempSync(join(work, 'case-'));
    writeFileSync(join(folder, 'app.mjs'), source);
    writeFileSync(join(folder, 'langgraph.json'), JSON.stringify({ graphs: {}, http: { app: './app.mjs:app' } }));
    const error = await loadHttpApp(join(folder, 'langgraph.json')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  });
});
