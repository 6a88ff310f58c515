import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { launchChromium, pageProblems } from '../support/console.js';
import { parsePrometheus } from '../support/http.js';

/**
 * A test that renders the console (a 1.5 MB bundle parsed and run by Chromium): at a load of 20
 * on two cores that alone has taken over 20 s, so each wait allows 60 s and such a test 120 s.
 */
const RENDER_TEST_MS = 120_000;

/** The operation block of `method path` in the console, once the console has rendered. */
async function operation(page: Page, method: 'get' | 'post', path: string) {
  await page.locator('.opblock').first().waitFor({ state: 'visible', timeout: 60_000 });
  const exact = new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
  const block = page.locator(`.opblock.opblock-${method}`).filter({ has: page.locator('.opblock-summary-path', { hasText: exact }) });
  expect(await block.count()).toBe(1);
  return block;
}

/**
 * Opens `method path`, presses "Try it out" and "Execute" with what the console fills in by
 * itself (the document's first example, for a body), and reads the live response's status
 * code and body from the console's DOM.
 */
async function tryItOut(page: Page, method: 'get' | 'post', path: string): Promise<{ status: number; body: any }> {
  const block = await operation(page, method, path);
  await block.locator('.opblock-summary').click();
  await block.getByRole('button', { name: 'Try it out' }).click();
  await block.getByRole('button', { name: 'Execute' }).click();
  const status = block.locator('.live-responses-table tr.response .response-col_status');
  await status.waitFor({ state: 'visible', timeout: 60_000 });
  const shown = await block.locator('.live-responses-table tr.response .response-col_description .highlight-code pre').first().textContent();
  return { status: Number((await status.textContent())?.trim()), body: JSON.parse(shown ?? '') };
}

/**
 * The Swagger console in a real headless Chromium (Debian's, driven by playwright-core; no
 * browser download): it renders the operations from /swagger/doc.json; "Try it out" with what
 * the console fills in by itself reaches the API and succeeds (GET /api/sessions, POST
 * /api/runs, POST /api/schedules); "Authorize" shows only when authentication is on.
 */
describe('Swagger console in headless Chromium', () => {
  let api: TestApi;
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchChromium();
    api = await startTestApi();
    // A session, so the live response carries one and is more than an empty list.
    await api.backend.store.runs.createRun('DefaultTenant', { run_id: 'console-run-1', session_id: 'console-1', agent_id: 'echo' });
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  it('sends a Content-Security-Policy, X-Frame-Options and nosniff with the page, its assets and the document', async () => {
    for (const name of ['', 'index.html', 'swagger-initializer.js', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'swagger-ui.css', 'favicon-32x32.png', 'doc.json']) {
      const response = await fetch(`${api.url}/swagger/${name}`);
      expect(response.status, name).toBe(200);
      expect(response.headers.get('content-security-policy'), name).toMatch(/^default-src 'none'; .*frame-ancestors 'none'/);
      expect(response.headers.get('x-frame-options'), name).toBe('DENY');
      expect(response.headers.get('x-content-type-options'), name).toBe('nosniff');
      await response.arrayBuffer();
    }
  });

  it('cannot be framed by another site', async () => {
    // Another origin (a port of its own) whose page frames the Swagger console.
    const framing: Server = createServer((_request, response) => {
      response.setHeader('Content-Type', 'text/html; charset=utf-8');
      response.end(`<!doctype html><title>framing</title><iframe id="framed" src="${api.url}/swagger/"></iframe>`);
    });
    await new Promise<void>((resolve) => framing.listen(0, '127.0.0.1', resolve));
    const page = await browser.newPage();
    try {
      const loaded = page.waitForEvent('framenavigated', { predicate: (frame) => frame !== page.mainFrame() });
      await page.goto(`http://127.0.0.1:${(framing.address() as AddressInfo).port}/`);
      const frame = await loaded;
      await frame.waitForLoadState('load');
      // Chromium replaces a refused frame with its error page: the Swagger console never ran in it.
      expect(await frame.evaluate(() => typeof (globalThis as { SwaggerUIBundle?: unknown }).SwaggerUIBundle).catch(() => 'refused')).not.toBe('function');
    } finally {
      await page.close();
      await new Promise((resolve) => framing.close(resolve));
    }
  });

  it('renders the operations and executes GET /api/sessions with a 200, and its CSP refuses nothing it needs', async () => {
    const page = await browser.newPage();
    const pageErrors = pageProblems(page);
    await page.addInitScript(() => {
      const refused: string[] = [];
      (globalThis as { refused?: string[] }).refused = refused;
      document.addEventListener('securitypolicyviolation', (event) => refused.push(`${event.violatedDirective} ${event.blockedURI}`));
    });
    try {
      await page.goto(`${api.url}/swagger/`);

      const operations = page.locator('.opblock');
      await operations.first().waitFor({ state: 'visible', timeout: 60_000 });
      expect(await operations.count()).toBe(api.api.routes.length);

      const { status, body } = await tryItOut(page, 'get', '/api/sessions');
      expect(status).toBe(200);
      expect(body).toMatchObject({ sessions: [expect.objectContaining({ id: 'console-1', agent_id: 'echo' })] });
      expect(pageErrors).toEqual([]);
      expect(await page.evaluate(() => (globalThis as { refused?: string[] }).refused)).toEqual([]);

      // The console's request reached the API for real: the API counted it.
      const metrics = parsePrometheus(String((await call(`${api.url}/metrics`)).body));
      const counted = metrics
        .get('agentplane_http_requests_total')
        ?.metrics.find((s) => s.labels?.method === 'GET' && s.labels.route === '/api/sessions' && s.labels.status === '200');
      expect(Number(counted?.value)).toBe(1);
    } finally {
      await page.close();
    }
  }, RENDER_TEST_MS);

  /** "Try it out" → "Execute" of `method path` on a fresh page of the console. */
  async function tryOnFreshPage(method: 'get' | 'post', path: string) {
    const page = await browser.newPage();
    try {
      await page.goto(`${api.url}/swagger/`);
      return await tryItOut(page, method, path);
    } finally {
      await page.close();
    }
  }

  it('"Try it out" with the defaults starts an echo run: POST /api/runs answers 202', async () => {
    const { status, body } = await tryOnFreshPage('post', '/api/runs');
    expect(status).toBe(202);
    expect(body).toMatchObject({ run_id: expect.any(String), status: 'queued' });
    const run = await call(`${api.url}/api/runs/${body.run_id}`);
    expect(run.body).toMatchObject({ agent_id: 'echo', session_id: body.session_id });
  }, RENDER_TEST_MS);

  it('"Try it out" with the defaults creates a schedule: POST /api/schedules answers 201', async () => {
    const { status, body } = await tryOnFreshPage('post', '/api/schedules');
    expect(status).toBe(201);
    expect(body).toMatchObject({ id: expect.any(String), agent_id: 'echo', cron_expr: '*/5 * * * *' });
    expect((await call(`${api.url}/api/schedules/${body.id}`)).status).toBe(200);
  }, RENDER_TEST_MS);

  it('shows no "Authorize" button with authentication off, and one with jwt', async () => {
    const withJwt = await startTestApi({ env: { SERVICE_AUTH: 'jwt', SERVICE_JWT_SECRET: 'a-console-secret-of-at-least-32-bytes' } });
    const page = await browser.newPage();
    try {
      const authorizeButtons = async (url: string) => {
        await page.goto(`${url}/swagger/`);
        await operation(page, 'get', '/api/sessions');
        return page.locator('.auth-wrapper .btn.authorize').count();
      };
      expect(await authorizeButtons(api.url)).toBe(0);
      expect(await authorizeButtons(withJwt.url)).toBe(1);
    } finally {
      await page.close();
      await withJwt.close();
    }
    // A second API and two renders of the console.
  }, 2 * RENDER_TEST_MS);
});
