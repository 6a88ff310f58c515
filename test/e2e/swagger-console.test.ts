import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { parsePrometheus } from '../support/http.js';

const CHROMIUM = '/usr/bin/chromium';

/**
 * The Swagger console in a real headless Chromium (Debian's, driven by playwright-core; no
 * browser download): it renders the operations from /swagger/doc.json and a "Try it out" of
 * GET /api/sessions reaches the API and shows its 200.
 */
describe('Swagger console in headless Chromium', () => {
  let api: TestApi;
  let browser: Browser;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
    api = await startTestApi();
    // A session, so the live response carries one and is more than an empty list.
    await api.backend.store.runs.createRun('DefaultTenant', { run_id: 'console-run-1', session_id: 'console-1', agent_id: 'echo' });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  it('renders the operations and executes GET /api/sessions with a 200', async () => {
    const page = await browser.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    try {
      await page.goto(`${api.url}/swagger/`);

      const operations = page.locator('.opblock');
      await operations.first().waitFor({ state: 'visible', timeout: 20_000 });
      expect(await operations.count()).toBe(api.api.routes.length);

      const listSessions = page.locator('.opblock.opblock-get').filter({
        has: page.locator('.opblock-summary-path', { hasText: /^\/api\/sessions$/ }),
      });
      expect(await listSessions.count()).toBe(1);
      await listSessions.locator('.opblock-summary').click();
      await listSessions.getByRole('button', { name: 'Try it out' }).click();
      await listSessions.getByRole('button', { name: 'Execute' }).click();

      const status = listSessions.locator('.live-responses-table tr.response .response-col_status');
      await status.waitFor({ state: 'visible', timeout: 20_000 });
      expect((await status.textContent())?.trim()).toBe('200');
      const shown = await listSessions.locator('.live-responses-table tr.response .response-col_description .highlight-code pre').first().textContent();
      expect(JSON.parse(shown ?? '')).toMatchObject({ sessions: [expect.objectContaining({ id: 'console-1', agent_id: 'echo' })] });
      expect(pageErrors).toEqual([]);

      // The console's request reached the API for real: the API counted it.
      const metrics = parsePrometheus(String((await call(`${api.url}/metrics`)).body));
      const counted = metrics
        .get('agentplane_http_requests_total')
        ?.metrics.find((s) => s.labels?.method === 'GET' && s.labels.route === '/api/sessions' && s.labels.status === '200');
      expect(Number(counted?.value)).toBe(1);
    } finally {
      await page.close();
    }
  });
});
