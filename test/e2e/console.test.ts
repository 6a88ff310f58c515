import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type RunEvent } from '../../src/client/index.js';
import { nextFireMs } from '../../src/domain/cron.js';
import { startTracing, stopTracing } from '../../src/observability/tracing.js';
import { call, type TestApi } from '../support/app.js';
import { expectAccessible, startConsoleApi, useConsoleHarness } from '../support/console.js';
import { spanReceived, startOtlpReceiver } from '../support/otlp-receiver.js';
import { waitFor } from '../support/wait.js';

/*
 * The console in Debian's Chromium against a real API, on the in-memory backend and on Redis
 * (this process executing runs, as a worker). No mocks: every screen talks to the API, and
 * each test checks what it shows against what the API itself answers. axe-core runs on every
 * screen visited and must find no serious or critical violation.
 */

const harness = useConsoleHarness();

describe.each(['memory', 'redis'] as const)('the console on %s', (mode) => {
  let api: TestApi;
  const client = () => createClient({ baseUrl: api.url });

  beforeAll(async () => {
    api = await startConsoleApi(harness.redisUrl(mode));
  });
  afterAll(async () => {
    await api?.close();
  });

  /** A new tab on a screen of the console; fails the test if the page throws or logs an error. */
  const open = (hash: string, allowed: RegExp[] = []): Promise<Page> => harness.open(`${api.url}/console/${hash}`, allowed);

  /** The session's events as the API streams them, up to the first `until`. */
  async function serverEvents(sessionId: string, until: RunEvent['type']): Promise<{ id: string; type: string; node: string }[]> {
    const abort = new AbortController();
    const events: { id: string; type: string; node: string }[] = [];
    const timer = setTimeout(() => abort.abort(), 10_000);
    for await (const { id, event } of client().events.stream({ session: sessionId, lastEventId: '0-0', signal: abort.signal })) {
      events.push({ id, type: event.type, node: event.node ?? '' });
      if (event.type === until) break;
    }
    clearTimeout(timer);
    return events;
  }

  it('shows a human-review run started from the console in the inbox live; the edit, the approval and the completed session', async () => {
    const sessionId = `console-review-${mode}`;
    const approver = await open('#/inbox');
    await approver.getByRole('status', { name: 'Event stream: Live' }).waitFor();
    await approver.evaluate(() => ((globalThis as any).notReloaded = true));
    await expectAccessible(approver, 'the empty inbox');

    const operator = await open('#/runs/new');
    await operator.getByLabel('Agent').selectOption('human-review');
    await operator.getByLabel(/^Input/).fill('{"topic": "console"}');
    await operator.getByLabel(/^Session id/).fill(sessionId);
    await expectAccessible(operator, 'start a run');
    await operator.getByRole('button', { name: 'Start run' }).click();
    await operator.getByRole('status').filter({ hasText: `on session ${sessionId}` }).waitFor();

    // The approver's inbox shows it without a reload.
    const row = approver.locator('tr[data-approval]', { hasText: sessionId });
    await row.waitFor();
    expect(await approver.evaluate(() => (globalThis as any).notReloaded)).toBe(true);
    expect(await row.textContent()).toContain('Publish the draft?');
    await expectAccessible(approver, 'the inbox with a request');

    await row.getByRole('link', { name: /^Open approval/ }).click();
    const editor = approver.getByLabel(/^Session state/);
    await waitFor('the state in the editor', async () => (await editor.inputValue()).includes('Draft: console'));
    const state = JSON.parse(await editor.inputValue()) as Record<string, unknown>;
    await editor.fill(JSON.stringify({ ...state, draft: 'Draft: edited in the console' }, null, 2));
    await approver.getByLabel(/^Comment/).fill('ship it from the console');
    await expectAccessible(approver, 'an opened approval');
    await approver.getByRole('button', { name: 'Save and approve' }).click();
    await approver.getByRole('status').filter({ hasText: /^Approved/ }).waitFor();
    await row.waitFor({ state: 'detached' });

    await approver.getByRole('link', { name: `Open session ${sessionId}` }).click();
    await approver.locator('[data-testid=latest-status]', { hasText: 'completed' }).waitFor();
    await approver.locator('.feed li[data-type=completed]').waitFor();
    // The page refreshes its parts as events arrive: wait for the last checkpoint in each.
    const last = (await call(`${api.url}/api/sessions/state?session_id=${sessionId}`)).body;
    expect(last.node_id).toBe('__end__');
    await approver.locator(`.timeline li[data-seq="${last.seq_num}"]`).waitFor();
    await approver.locator('[data-testid=checkpoint-seq]', { hasText: new RegExp(`^${last.seq_num}$`) }).waitFor();

    // The timeline: the approver's checkpoint changed exactly the edited key.
    const timeline = await approver.$$eval('.timeline li', (items) =>
      items.map((li) => ({
        seq: Number(li.getAttribute('data-seq')),
        changes: Array.from(li.querySelectorAll('tr[data-key]')).map((tr) => ({
          key: tr.getAttribute('data-key'),
          kind: tr.className,
          before: tr.querySelector('.before')?.textContent,
          after: tr.querySelector('.after')?.textContent,
        })),
      })),
    );
    expect(timeline).toContainEqual({
      seq: expect.any(Number),
      changes: [{ key: 'draft', kind: 'diff-changed', before: '"Draft: console"', after: '"Draft: edited in the console"' }],
    });
    const history = await call(`${api.url}/api/sessions/history?session_id=${sessionId}`);
    expect(timeline.map((c) => c.seq)).toEqual(history.body.checkpoints.map((c: { seq_num: number }) => c.seq_num));

    const finalState = JSON.parse((await approver.getByLabel('Current state of the session').textContent()) ?? '');
    expect(finalState).toEqual({ topic: 'console', draft: 'Draft: edited in the console', approved: true, comment: 'ship it from the console', outcome: 'published' });

    // The feed: every event of the session, in the order (and with the ids) the API streams them.
    const shown = await approver.$$eval('.feed li', (items) =>
      items.map((li) => ({ id: li.getAttribute('data-id') ?? '', type: li.getAttribute('data-type') ?? '', node: li.querySelector('code')?.textContent ?? '' })),
    );
    expect(shown).toEqual(await serverEvents(sessionId, 'completed'));
    const types = shown.map((e) => e.type);
    expect(types.indexOf('interrupted')).toBeLessThan(types.indexOf('approval_decided'));
    expect(types.indexOf('approval_decided')).toBeLessThan(types.indexOf('completed'));
    await expectAccessible(approver, 'the session page');
    // Two tabs through five screens, the console bundled at its first request: over a minute at a load of 28.
  }, 150_000);

  it('shows 412 and what changed when the state changed between opening and saving, then saves on the latest', async () => {
    const waited = await call(`${api.url}/api/runs/wait`, { method: 'POST', json: { agent_id: 'human-review', input: { topic: 'race' } } });
    expect(waited.body.status).toBe('interrupted');
    const sessionId: string = waited.body.session_id;
    const page = await open(`#/inbox/${encodeURIComponent(waited.body.approval_id)}`, [/status of 412/]);
    const editor = page.getByLabel(/^Session state/);
    await waitFor('the state in the editor', async () => (await editor.inputValue()).includes('Draft: race'));

    // Someone else saves first.
    const opened = await call(`${api.url}/api/sessions/state?session_id=${sessionId}`);
    const other = await call(`${api.url}/api/sessions/state?session_id=${sessionId}`, {
      method: 'POST',
      headers: { 'If-Match': `"${opened.body.seq_num}"` },
      json: { state: { draft: 'changed elsewhere' } },
    });
    expect(other.status).toBe(200);

    await editor.fill(JSON.stringify({ ...JSON.parse(await editor.inputValue()), topic: 'mine' }, null, 2));
    await page.getByRole('button', { name: 'Save state' }).click();
    await page.getByRole('alert').filter({ hasText: 'The state changed since you opened it (412)' }).waitFor();
    const changed = page.locator('.conflict table.diff').first();
    expect(await changed.locator('caption').textContent()).toBe(`Changed since you opened it (checkpoint ${opened.body.seq_num} → ${other.body.seq_num})`);
    expect(await changed.locator('tr[data-key=draft] .after').textContent()).toBe('"changed elsewhere"');
    expect((await call(`${api.url}/api/sessions/state?session_id=${sessionId}`)).body.state).toEqual({ topic: 'race', draft: 'changed elsewhere' });
    await expectAccessible(page, 'a 412 conflict');

    await page.getByRole('button', { name: 'Apply my edits to the latest state' }).click();
    await page.getByRole('button', { name: 'Save state' }).click();
    await page.getByRole('status').filter({ hasText: `Saved as checkpoint ${other.body.seq_num + 1}.` }).waitFor();
    expect((await call(`${api.url}/api/sessions/state?session_id=${sessionId}`)).body.state).toEqual({ topic: 'mine', draft: 'changed elsewhere' });
  });

  it('cancels and resumes runs from the session page, and shows custom events in the feed', async () => {
    const waited = await call(`${api.url}/api/runs/wait`, { method: 'POST', json: { agent_id: 'human-review', input: { topic: 'cancel me' } } });
    const sessionId: string = waited.body.session_id;
    const page = await open(`#/sessions/${sessionId}`);
    await page.getByRole('button', { name: `Cancel run ${waited.body.id}` }).click();
    await page.getByRole('button', { name: `Confirm cancel of run ${waited.body.id}` }).click();
    await page.locator(`tr[data-run="${waited.body.id}"] .badge`, { hasText: 'cancelled' }).waitFor();
    expect((await call(`${api.url}/api/runs/${waited.body.id}`)).body.status).toBe('cancelled');
    await page.getByRole('button', { name: 'Resume session' }).click();
    await page.locator('[data-testid=latest-status]', { hasText: 'interrupted' }).waitFor();
    const runs = await call(`${api.url}/api/runs?session_id=${sessionId}`);
    expect(runs.body.runs.map((r: { status: string }) => r.status)).toEqual(['interrupted', 'cancelled']);

    const started = await call(`${api.url}/api/runs`, {
      method: 'POST',
      json: { agent_id: 'stream-words', input: { text: 'alpha beta gamma', delay_ms: 200 } },
    });
    const words = await open(`#/sessions/${started.body.session_id}`);
    await words.locator('.feed li[data-type=completed]').waitFor();
    const custom = await words.$$eval('.feed li[data-type=custom] .event-detail', (items) => items.map((i) => i.textContent));
    expect(custom).toEqual(['alpha', 'beta', 'gamma'].map((word, index) => `token ${JSON.stringify({ index, word })}`));
    await words.locator('table.waterfall tbody tr').nth(1).waitFor();
    const spans = await words.$$eval('table.waterfall tbody th', (cells) => cells.map((c) => c.textContent));
    expect(spans).toEqual(['run stream-words', 'speak']);
    // Tracing is off for this API: no trace id to show.
    expect(await words.locator('.trace-ids').count()).toBe(0);
    await expectAccessible(words, 'a session with custom events and a trace');
  });

  it("shows, with tracing on, the OpenTelemetry trace id of the session's runs on its trace, copyable", async () => {
    const traceId = mode === 'memory' ? '6e0c63257de34c92bf9efcd03927272e' : '7f1d74368ef45da3c0aafde14a38383f';
    const receiver = await startOtlpReceiver();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    // An API of its own, built with tracing on: its server spans continue the caller's traceparent.
    expect(startTracing('embedded')).toBe(true);
    const traced = await startConsoleApi(harness.redisUrl(mode));
    try {
      const waited = await call(`${traced.url}/api/runs/wait`, { method: 'POST', json: { agent_id: 'echo', input: {} }, headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
      expect(waited.status).toBe(200);
      const run = await spanReceived(receiver, 'the exported run span', (span) => span.name === 'run echo' && span.attributes['agentplane.run.id'] === waited.body.id);
      expect(run.traceId).toBe(traceId);

      const page = await harness.open(`${traced.url}/console/#/sessions/${waited.body.session_id}`);
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: traced.url });
      const line = page.locator(`.trace-ids li[data-trace="${traceId}"]`);
      await line.waitFor();
      expect(await line.locator('code').textContent()).toBe(traceId);
      expect(await line.textContent()).toMatch(new RegExp(`^trace ${traceId}\\s*Copy\\s*run echo$`));
      expect(await page.locator('.trace-ids li').count()).toBe(1);
      await line.getByRole('button', { name: `Copy trace id ${traceId}` }).click();
      await line.getByRole('button', { name: `Copied trace id ${traceId}` }).waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(traceId);
      await expectAccessible(page, 'a trace with its OpenTelemetry trace id');
    } finally {
      await traced.close();
      await stopTracing();
      delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
      await receiver.close();
    }
  });

  it('lists sessions newest first, filtered by agent, a page at a time', async () => {
    for (let i = 0; i < 21; i += 1) {
      expect((await call(`${api.url}/api/runs`, { method: 'POST', json: { agent_id: 'echo', input: { i }, session_id: `echo-page-${i}` } })).status).toBe(202);
    }
    const expected = (await call(`${api.url}/api/sessions?agent_id=echo&limit=100`)).body.sessions.map((s: { id: string }) => s.id);
    expect(expected).toHaveLength(21);

    const page = await open('#/sessions');
    await page.getByLabel('Agent').selectOption('echo');
    const ids = () => page.$$eval('tr[data-session]', (rows) => rows.map((r) => r.getAttribute('data-session')));
    await waitFor('the first page of echo sessions', async () => (await ids()).length === 20 && (await ids()).every((id) => id?.startsWith('echo-')));
    const first = await ids();
    await expectAccessible(page, 'the sessions list');
    await page.getByRole('button', { name: 'Next page' }).click();
    await waitFor('the second page', async () => (await ids()).length === 1);
    expect([...first, ...(await ids())]).toEqual(expected);
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);

    await page.getByLabel('Agent').selectOption('human-review');
    await waitFor('the human-review sessions', async () => (await ids()).length > 0 && (await ids()).every((id) => !id?.startsWith('echo-')));
  });

  it("validates the cron as it is typed with the parser's reason, previews five fire times in the zone, and creates, lists and deletes", async () => {
    const page = await open('#/schedules/new');
    const posts: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST') posts.push(request.url());
    });
    const cron = page.getByLabel(/^Cron expression/);
    await cron.fill('61 * * * *');
    const server = await call(`${api.url}/api/schedules`, { method: 'POST', json: { agent_id: 'echo', cron_expr: '61 * * * *' } });
    expect(server.status).toBe(400);
    await page.locator('#schedule-cron-message', { hasText: server.body.error.message }).waitFor();
    expect(server.body.error.message).toContain('Constraint error, got value 61 expected range 0-59');
    expect(await cron.getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByRole('button', { name: 'Create schedule' }).isDisabled()).toBe(true);
    await expectAccessible(page, 'the schedule form with an invalid cron');

    const before = Date.now();
    await cron.fill('30 9 * * MON-FRI');
    await page.getByLabel(/^Time zone/).fill('America/New_York');
    await page.locator('#schedule-cron-message', { hasText: 'Valid: 30 9 * * MON-FRI' }).waitFor();
    await waitFor('a preview in New York time', async () => ((await page.locator('.preview li').first().textContent()) ?? '').match(/E[SD]T|GMT-[45]/));
    const times = await page.$$eval('.preview li time', (items) => items.map((t) => Date.parse(t.getAttribute('datetime') ?? '')));
    expect(times).toHaveLength(5);
    expect(times[0]).toBeGreaterThan(before);
    for (let i = 1; i < 5; i += 1) expect(times[i]).toBe(nextFireMs('30 9 * * MON-FRI', 'America/New_York', times[i - 1]!));
    const wallClock = new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', weekday: 'short', hour: '2-digit', minute: '2-digit', hour12: false });
    for (const time of times) expect(wallClock.format(time)).toMatch(/^(Mon|Tue|Wed|Thu|Fri) 09:30$/);

    await page.getByLabel(/^Input/).fill('{"text": ');
    await page.locator('#schedule-input-message', { hasText: 'Not valid JSON' }).waitFor();
    await page.getByLabel(/^Input/).fill('{"text": "from the console"}');
    await page.getByLabel(/^Start each fire on a new session/).uncheck();
    expect(posts).toEqual([]);
    await expectAccessible(page, 'the schedule form');
    await page.getByRole('button', { name: 'Create schedule' }).click();

    await page.getByRole('heading', { name: 'Schedules', level: 1 }).waitFor();
    const row = page.locator('tr[data-schedule]', { hasText: '30 9 * * MON-FRI' });
    await row.waitFor();
    const id = await row.getAttribute('data-schedule');
    const stored = await call(`${api.url}/api/schedules/${id}`);
    expect(stored.body).toMatchObject({ agent_id: 'echo', cron_expr: '30 9 * * MON-FRI', timezone: 'America/New_York', input: { text: 'from the console' }, new_session: false });
    expect(Date.parse(stored.body.next_run)).toBe(times[0]);

    await row.getByRole('button', { name: 'History' }).click();
    await page.getByText('Not fired yet.').waitFor();
    await expectAccessible(page, 'the schedules list with a history');
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.getByRole('button', { name: 'Confirm delete' }).click();
    await row.waitFor({ state: 'detached' });
    expect((await call(`${api.url}/api/schedules/${id}`)).status).toBe(404);
  });
});
