import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@langchain/langgraph-sdk';
import { Client as Client2 } from '@langchain/langgraph-sdk-2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { buildUiBundles } from '../../src/langgraph/ui-bundles.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { startRedis, type TestRedis } from '../support/redis.js';

/*
 * langgraph.json `ui` (test/fixtures/langgraph-ui/): the components built with LangGraph's own
 * bundler (@langchain/langgraph-ui) when the API starts, the HTML that loads one
 * (`client["~ui"].getComponent`, as LoadExternalComponent asks it), the bundle's files.
 */

const CONFIG = fileURLToPath(new URL('../fixtures/langgraph-ui/langgraph.json', import.meta.url));
const KEY = 'ui-user-key';

describe.each(['memory', 'redis'] as const)('generative UI (%s)', (backend) => {
  let redis: TestRedis | undefined;
  let api: TestApi;
  beforeAll(async () => {
    if (backend === 'redis') redis = await startRedis();
    api = await startTestApi({
      secured: true,
      env: { SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: `${KEY}:viewer:T1` },
      app: { uiBundles: await buildUiBundles(CONFIG) },
      ...(redis ? { redisUrl: redis.url } : {}),
    });
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await redis?.stop();
  });

  it('answers the HTML that loads a component (SDK 1.x and 2.0 ~ui.getComponent), which a viewer may ask', async () => {
    const client = new Client({ apiUrl: api.url, apiKey: KEY });
    const html = await client['~ui'].getComponent('cards', 'weather');
    const port = new URL(api.url).port;
    expect(html).toBe(`<script src="http://127.0.0.1:${port}/ui/cards/entrypoint.js" onload='__LGUI_cards.render("weather", "{{shadowRootId}}")'></script>`);
    expect(await new Client2({ apiUrl: api.url, apiKey: KEY })['~ui'].getComponent('cards', 'receipt')).toBe(
      `<script src="http://127.0.0.1:${port}/ui/cards/entrypoint.js" onload='__LGUI_cards.render("receipt", "{{shadowRootId}}")'></script>`,
    );
    expect((await call(`${api.url}/ui/cards`, { method: 'POST', json: { name: 'weather' } })).status).toBe(401);
    const missing = await call(`${api.url}/ui/nope`, { method: 'POST', json: { name: 'weather' }, headers: { 'x-api-key': KEY } });
    expect([missing.status, missing.body.error.code]).toEqual([404, 'not_found']);
  });

  it('a component name stays a string of the onload script: it cannot leave the attribute, and the script gets it as sent', async () => {
    const name = `x' onmouseover='alert(document.domain)' a='<b>&amp;"\\`;
    const answer = await call(`${api.url}/ui/cards`, { method: 'POST', json: { name }, headers: { 'x-api-key': KEY } });
    expect(answer.status).toBe(200);
    const html = answer.body as string;
    // The attribute's quotes are the only ones in the tag, and nothing in it is a character reference.
    const onload = /^<script src="[^"]*" onload='([^'<>&]*)'><\/script>$/.exec(html)?.[1];
    expect(onload, html).toBeDefined();
    const rendered: unknown[] = [];
    new Function('__LGUI_cards', onload!)({ render: (...args: unknown[]) => rendered.push(args) });
    expect(rendered).toEqual([[name, '{{shadowRootId}}']]);
  });

  it('a Host header cannot leave the src attribute', async () => {
    const { hostname, port } = new URL(api.url);
    const html = await new Promise<string>((resolve, reject) => {
      const body = JSON.stringify({ name: 'weather' });
      const headers = { host: `127.0.0.1:${port}"onerror="alert(1)`, 'content-type': 'application/json', 'x-api-key': KEY };
      const outgoing = httpRequest({ host: hostname, port, method: 'POST', path: '/ui/cards', headers, agent: false }, (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        response.on('end', () => resolve(text));
      });
      outgoing.on('error', reject);
      outgoing.end(body);
    });
    expect(html).toBe(`<script src="//127.0.0.1:${port}&#34;onerror=&#34;alert(1)/ui/cards/entrypoint.js" onload='__LGUI_cards.render("weather", "{{shadowRootId}}")'></script>`);
  });

  it('the HTML and the bundle files say nosniff and a Content-Security-Policy that runs nothing as a page', async () => {
    const html = await fetch(`${api.url}/ui/cards`, { method: 'POST', body: JSON.stringify({ name: 'weather' }), headers: { 'content-type': 'application/json', 'x-api-key': KEY } });
    const file = await fetch(`${api.url}/ui/cards/entrypoint.js`);
    for (const response of [html, file]) {
      expect(response.status).toBe(200);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'; sandbox");
    }
  });

  it("serves the bundle's script without a credential, as a browser's <script src> loads it", async () => {
    const response = await fetch(`${api.url}/ui/cards/entrypoint.js`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    const code = await response.text();
    // React comes from the page (LangGraph's shared modules), the components are in it.
    expect(code).toContain('globalThis[Symbol.for("LGUI_REQUIRE")]');
    expect(code).toContain('var __LGUI_cards');
    expect(code).toContain('Weather for ');
    expect((await call(`${api.url}/ui/cards/other.js`)).status).toBe(404);
  });
});

describe('a ui that cannot be built', () => {
  const work = mkdtempSync(join(tmpdir(), 'agentplane-ui-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('without @langchain/langgraph-ui in the project: one ConfigError line saying what to install', async () => {
    writeFileSync(join(work, 'langgraph.json'), JSON.stringify({ graphs: {}, ui: { cards: './cards.tsx' } }));
    const error = await buildUiBundles(join(work, 'langgraph.json')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/"ui" is built with @langchain\/langgraph-ui, which the project does not have: npm install @langchain\/langgraph-ui$/);
  });

  it('a component file that does not compile: one ConfigError line', async () => {
    const folder = dirname(CONFIG);
    const file = join(folder, `broken-${process.pid}.json`);
    writeFileSync(file, JSON.stringify({ graphs: {}, ui: { broken: './nowhere.tsx' } }));
    try {
      const error = await buildUiBundles(file).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/"ui": the components did not build: /);
      expect((error as Error).message).not.toContain('\n');
    } finally {
      rmSync(file, { force: true });
    }
  });
});
