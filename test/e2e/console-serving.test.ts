import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { ensureBuilt, ROOT } from '../support/build.js';
import { startProcess } from '../support/processes.js';

/*
 * How the console is served (no browser here; the console-*.test.ts files drive it): public
 * static files under /console/ on every API, off with SERVICE_CONSOLE=false, built from source
 * by `npm start` with no build step, and from dist/console by the compiled API.
 */

const KEYS = 'k-user:user:acme,k-view:viewer:acme';

describe('/console/ on an API with API keys and RBAC', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ secured: true, env: { SERVICE_AUTH: 'apikey', SERVICE_RBAC: 'true', SERVICE_API_KEYS: KEYS, SERVICE_API_KEY_HEADER: 'X-Team-Key' } });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('serves the page, its script and its style without a credential, with a strict CSP', async () => {
    const page = await fetch(`${api.url}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'; script-src 'self'");
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await page.text();
    expect(html).toContain('<script type="module" src="./app.js"></script>');
    // Nothing from elsewhere: no CDN, no analytics.
    expect(html).not.toMatch(/https?:\/\//);

    const script = await fetch(`${api.url}/console/app.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    expect((await script.text()).length).toBeGreaterThan(10_000);
    const style = await fetch(`${api.url}/console/app.css`);
    expect([style.status, style.headers.get('content-type')]).toEqual([200, 'text/css; charset=utf-8']);
  });

  it('tells the page how to authenticate, and nothing secret', async () => {
    const settings = await call(`${api.url}/console/config.json`);
    expect(settings.status).toBe(200);
    expect(settings.body).toEqual({ auth: 'apikey', api_key_header: 'X-Team-Key', approvals: true, schedules: true });
  });

  it('redirects /console, answers 304 to a matching ETag, 405 to other methods and 404 to unknown files', async () => {
    const bare = await fetch(`${api.url}/console`, { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([302, '/console/']);

    const first = await fetch(`${api.url}/console/app.js`);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    // node:http, not fetch: fetch adds Cache-Control: no-cache to a conditional request, which asks for a full answer.
    const again = await new Promise<number | undefined>((resolve, reject) => {
      get(`${api.url}/console/app.js`, { headers: { 'If-None-Match': etag! } }, (response) => {
        response.resume();
        resolve(response.statusCode);
      }).on('error', reject);
    });
    expect(again).toBe(304);

    const post = await call(`${api.url}/console/`, { method: 'POST' });
    expect([post.status, post.headers.get('allow'), post.body.error.code]).toEqual([405, 'GET, HEAD', 'method_not_allowed']);
    const missing = await call(`${api.url}/console/nope.js`);
    expect([missing.status, missing.body.error.code]).toEqual([404, 'not_found']);
  });

  it('leaves the API itself behind the credential', async () => {
    expect((await call(`${api.url}/api/sessions`)).status).toBe(401);
  });
});

describe('SERVICE_CONSOLE=false', () => {
  it('leaves the console out of the start-up line', async () => {
    const proc = await startProcess({ entry: 'src/main/api.ts', env: { REDIS_URL: undefined, LOG_LEVEL: 'info', SERVICE_CONSOLE: 'false' } });
    try {
      const listening = await proc.waitForLine((l) => l.json?.msg === 'agentplane api listening');
      expect(listening.json).toMatchObject({ url: proc.url, swagger: `${proc.url}/swagger/` });
      expect(listening.json).not.toHaveProperty('console');
    } finally {
      await proc.stop();
    }
  });

  it('removes the console: /console/ and its files are 404', async () => {
    const api = await startTestApi({ env: { SERVICE_CONSOLE: 'false' } });
    try {
      for (const path of ['/console/', '/console/app.js', '/console/config.json']) expect((await call(`${api.url}${path}`)).status, path).toBe(404);
      expect((await call(`${api.url}/api/sessions`)).status).toBe(200);
    } finally {
      await api.close();
    }
  });
});

describe('the console of a process', () => {
  it('is served by `npm start` (src/main/api.ts under tsx) with no build step, and its URL is in the start-up line', async () => {
    const proc = await startProcess({ entry: 'src/main/api.ts', env: { REDIS_URL: undefined, LOG_LEVEL: 'info' } });
    try {
      const listening = await proc.waitForLine((l) => l.json?.msg === 'agentplane api listening');
      expect(listening.json).toMatchObject({ url: proc.url, swagger: `${proc.url}/swagger/`, console: `${proc.url}/console/` });
      const page = await fetch(`${proc.url}/console/`);
      expect(page.status).toBe(200);
      const script = await fetch(`${proc.url}/console/app.js`);
      expect(script.status).toBe(200);
      expect(await script.text()).toContain('agentplane');
    } finally {
      await proc.stop();
    }
  });

  it('is built into dist/console by `npm run build` and served from there by the compiled API', { timeout: 300_000 }, async () => {
    await ensureBuilt();
    const built = (name: string) => readFileSync(join(ROOT, 'dist', 'console', name));
    const proc = await startProcess({ entry: 'dist/src/main/api.js', env: { REDIS_URL: undefined, LOG_LEVEL: 'warn' } });
    try {
      for (const name of ['index.html', 'app.js', 'app.css']) {
        const response = await fetch(`${proc.url}/console/${name}`);
        expect(response.status, name).toBe(200);
        expect(Buffer.from(await response.arrayBuffer()).equals(built(name)), name).toBe(true);
      }
    } finally {
      await proc.stop();
    }
  });

  it('is as small as the console guide says (about: within 10 %, gzipped and raw)', async () => {
    // The same bundle `npm run build` writes, built in memory by the same script.
    const script = new URL('../../scripts/build-console.mjs', import.meta.url).href;
    const { buildConsole } = (await import(script)) as { buildConsole(): Promise<Map<string, Buffer>> };
    const files = await buildConsole();
    expect([...files.keys()].sort()).toEqual(['app.css', 'app.js', 'index.html']);
    const gzipped = [...files.values()].reduce((sum, bytes) => sum + gzipSync(bytes, { level: 9 }).length, 0);
    const raw = [...files.values()].reduce((sum, bytes) => sum + bytes.length, 0);
    // Figures that say "about" cannot drift with every change to the console, and are still checked.
    const stated = /console\s+is\s+about\s+(\d+)\s+KiB\s+gzipped\s+\(about\s+(\d+)\s+KiB\s+raw/.exec(readFileSync(join(ROOT, 'docs/guides/console.md'), 'utf8'));
    expect(stated, 'docs/guides/console.md states "the console is about N KiB gzipped (about M KiB raw"').not.toBeNull();
    expect(Math.abs(Number(stated![1]) * 1024 - gzipped) / gzipped, `gzipped: ${(gzipped / 1024).toFixed(1)} KiB`).toBeLessThan(0.1);
    expect(Math.abs(Number(stated![2]) * 1024 - raw) / raw, `raw: ${(raw / 1024).toFixed(1)} KiB`).toBeLessThan(0.1);
  });
});
