/**
 * `npm run console:screenshots`: regenerates docs/console/{inbox,session,schedule-form,runs,decided}.png,
 * the screenshots the README shows. Starts an embedded API in this process on a free port,
 * fills it through the API (a reviewed and published session, pending and decided approvals,
 * a token stream, a cancelled run; one failed run written to the store, as no built-in agent
 * fails), and drives the console in Debian's Chromium (/usr/bin/chromium, playwright-core).
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { builtInAgents } from '../src/agents/index.js';
import { createClient } from '../src/client/index.js';
import { loadConfig } from '../src/config.js';
import { anonymous } from '../src/http/middleware/authenticate.js';
import { createApiServer } from '../src/main/api-server.js';
import { compose } from '../src/main/compose.js';
import { createLogger } from '../src/main/logger.js';
import { AgentRegistry } from '../src/runtime/registry.js';

const OUT = fileURLToPath(new URL('../docs/console/', import.meta.url));
const VIEWPORT = { width: 1280, height: 860 };

const config = loadConfig({ SERVICE_HOST: '127.0.0.1', SERVICE_PORT: '0', LOG_LEVEL: 'silent' });
const composition = compose(config, { logger: createLogger('silent'), agents: new AgentRegistry(builtInAgents), defaultMetrics: false });
const server = createApiServer(composition, { authenticate: anonymous });
const url = await server.listen();
const api = createClient({ baseUrl: url });
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});

async function must<T>(call: Promise<{ data?: T; error?: unknown }>): Promise<T> {
  const { data, error } = await call;
  if (error !== undefined || data === undefined) throw new Error(`API call failed: ${JSON.stringify(error)}`);
  return data;
}

async function shoot(page: Page, name: string, fullPage = false): Promise<void> {
  // No focus ring in the pictures.
  await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { blur(): void } | null } }).document.activeElement?.blur());
  await page.screenshot({ path: `${OUT}${name}.png`, fullPage });
  process.stdout.write(`wrote docs/console/${name}.png\n`);
}

try {
  mkdirSync(OUT, { recursive: true });
  // A session reviewed and published: one edited key, a comment, the whole event history.
  const reviewed = await api.runs.wait({ agent_id: 'human-review', input: { topic: 'release notes 1.4' }, session_id: 'release-notes-1.4' });
  const checkpoint = await must(api.GET('/api/sessions/state', { params: { query: { session_id: 'release-notes-1.4' } } }));
  await must(
    api.POST('/api/sessions/state', {
      params: { query: { session_id: 'release-notes-1.4' } },
      body: { state: { draft: 'Release notes 1.4: faster resumes, a web console.' } },
      headers: { 'If-Match': `"${checkpoint.seq_num}"` },
    }),
  );
  await api.approvals.respond({ id: reviewed.approval!.id, approved: true, comment: 'Ship it.', wait_ms: 10_000 });
  await api.runs.wait({ agent_id: 'stream-words', input: { text: 'tokens streamed as custom events' }, session_id: 'stream-demo' });
  for (const topic of ['pricing page', 'onboarding email', 'incident summary']) {
    await api.runs.wait({ agent_id: 'human-review', input: { topic }, session_id: `review-${topic.replaceAll(' ', '-')}` });
  }
  const dropped = await api.runs.wait({ agent_id: 'human-review', input: { topic: 'old banner' }, session_id: 'review-old-banner' });
  await must(api.POST('/api/runs/{id}/cancel', { params: { path: { id: dropped.id } } }));
  const { store } = composition.backend;
  const failed = await store.runs.createRun('DefaultTenant', { run_id: 'nightly-import-0412', session_id: 'nightly-import', agent_id: 'echo' });
  await store.runs.updateRun('DefaultTenant', failed.id, { status: 'failed', error: 'upstream answered 503 three times' });

  const page = await browser.newPage({ viewport: VIEWPORT });
  const pending = await must(api.GET('/api/approval/pending'));
  await page.goto(`${url}/console/#/inbox/${encodeURIComponent(pending.pending[0]!.id)}`);
  await page.getByRole('status', { name: 'Event stream: Live' }).waitFor();
  await page.getByLabel(/^Session state/).waitFor();
  await page.getByLabel(/^Comment/).fill('Looks good; publish after the pricing review.');
  await shoot(page, 'inbox');

  await page.goto(`${url}/console/#/sessions/release-notes-1.4`);
  await page.locator('.feed li[data-type=completed]').waitFor();
  await page.locator('table.waterfall').waitFor();
  await shoot(page, 'session', true);

  await page.goto(`${url}/console/#/schedules/new`);
  await page.getByLabel(/^Cron expression/).fill('30 9 * * MON-FRI');
  await page.getByLabel(/^Time zone/).fill('Europe/Berlin');
  await page.getByLabel(/^Input/).fill('{\n  "topic": "weekly digest"\n}');
  await page.locator('.preview li').nth(4).waitFor();
  await shoot(page, 'schedule-form', true);

  await page.goto(`${url}/console/#/runs`);
  await page.locator('tr[data-run="nightly-import-0412"]').waitFor();
  await shoot(page, 'runs');

  const rejected = (await must(api.GET('/api/approval/pending'))).pending.find((a) => a.session_id === 'review-incident-summary')!;
  await api.approvals.respond({ id: rejected.id, approved: false, comment: 'Wait for the postmortem.', wait_ms: 10_000 });
  await page.goto(`${url}/console/#/approvals/decided`);
  await page.locator(`tr[data-approval="${rejected.id}"]`).waitFor();
  await shoot(page, 'decided');
} finally {
  await browser.close();
  server.server.closeAllConnections();
  await new Promise<void>((resolve) => server.server.close(() => resolve()));
  await composition.close();
}
