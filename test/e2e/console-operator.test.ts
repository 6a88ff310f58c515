import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentRegistry } from '../../src/runtime/registry.js';
import agents from '../fixtures/agents.js';
import { call, type TestApi } from '../support/app.js';
import { expectAccessible, startConsoleApi, useConsoleHarness } from '../support/console.js';
import { waitFor } from '../support/wait.js';

/*
 * The console as an operator uses it, in Debian's Chromium against a real API on the in-memory
 * backend and on Redis: a broken link, the tenant-wide runs page, run status and search on the
 * sessions page, decided approvals, a request's JSON payload and answer, the cancel confirmation
 * and a schedule's next run in its zone. Each test checks what the page shows against what the API answers; axe-core runs on
 * every screen visited.
 */

const TENANT = 'DefaultTenant';

const harness = useConsoleHarness();

describe.each(['memory', 'redis'] as const)('the console on %s', (mode) => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startConsoleApi(harness.redisUrl(mode), { agents: new AgentRegistry(agents) });
  });
  afterAll(async () => {
    await api?.close();
  });

  /** A new tab on a screen of the console; fails the test if the page throws or logs an error. */
  const open = (hash: string, allowed: RegExp[] = []): Promise<Page> => harness.open(`${api.url}/console/${hash}`, allowed);

  it('shows a notice for a link with a malformed % escape, and the navigation still works', async () => {
    const page = await open('#/sessions/%E0%A4%A');
    await page.getByRole('alert').filter({ hasText: 'This link is broken' }).waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('#/sessions/%E0%A4%A');
    await expectAccessible(page, 'a broken link');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sessions' }).click();
    await page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor();
  });

  /** A run of `agent` on a new session (with its first checkpoint), left with `status` (and `error` when it failed). */
  async function seedRun(session: string, agent: 'echo' | 'human-review', status: 'completed' | 'failed' | 'cancelled', error?: string): Promise<string> {
    const start = { node_id: agent === 'echo' ? 'receive' : 'draft', input: {} };
    const run = await api.backend.store.runs.createRun(TENANT, { run_id: `run-${session}`, session_id: session, agent_id: agent, start });
    await api.backend.store.runs.updateRun(TENANT, run.id, { status, ...(error ? { error } : {}) });
    return run.id;
  }

  const rowIds = (page: Page, attribute: string) => page.$$eval(`tr[${attribute}]`, (rows, name) => rows.map((r) => r.getAttribute(name)), attribute);

  it('lists every run of the tenant newest first, filtered by status and agent, with links to their sessions', async () => {
    await seedRun(`ops-failed-echo-${mode}`, 'echo', 'failed', 'boom in echo');
    await seedRun(`ops-failed-review-${mode}`, 'human-review', 'failed', 'boom in review');
    await seedRun(`ops-done-${mode}`, 'echo', 'completed');
    const page = await open('#/runs');
    const everything = (await call(`${api.url}/api/runs?limit=20`)).body.runs.map((r: { id: string }) => r.id);
    await waitFor('every run, newest first', async () => JSON.stringify(await rowIds(page, 'data-run')) === JSON.stringify(everything));
    // The tenant's queue, as GET /api/queue answers it.
    const queue = (await call(`${api.url}/api/queue`)).body;
    expect(queue).toMatchObject({ tenant: TENANT, queued: 0, running: 0 });
    const said = `Queue of ${TENANT}: 0 waiting for a worker (at most ${queue.max_queued}), 0 running.`;
    await waitFor('the tenant’s queue', async () => (await page.locator('[data-testid=tenant-queue]').textContent())?.replace(/\s+/g, ' ') === said);
    await expectAccessible(page, 'the runs page');

    // Failed comes first among the statuses: what an operator looks for first.
    expect((await page.getByLabel('Status').locator('option').allTextContents()).slice(0, 2)).toEqual(['All statuses', 'failed']);
    await page.getByLabel('Status').selectOption('failed');
    const failed = (await call(`${api.url}/api/runs?status=failed&limit=20`)).body.runs;
    expect(failed.map((r: { id: string }) => r.id)).toEqual(expect.arrayContaining([`run-ops-failed-echo-${mode}`, `run-ops-failed-review-${mode}`]));
    await waitFor('the failed runs', async () => JSON.stringify(await rowIds(page, 'data-run')) === JSON.stringify(failed.map((r: { id: string }) => r.id)));
    expect(await page.locator(`tr[data-run="run-ops-failed-echo-${mode}"]`).textContent()).toContain('boom in echo');

    await page.getByLabel('Agent').selectOption('human-review');
    const both = (await call(`${api.url}/api/runs?status=failed&agent_id=human-review&limit=20`)).body.runs.map((r: { id: string }) => r.id);
    expect(both).toContain(`run-ops-failed-review-${mode}`);
    expect(both).not.toContain(`run-ops-failed-echo-${mode}`);
    await waitFor('the failed human-review runs', async () => JSON.stringify(await rowIds(page, 'data-run')) === JSON.stringify(both));
    await expectAccessible(page, 'the runs page, filtered');

    await page.locator(`tr[data-run="run-ops-failed-review-${mode}"]`).getByRole('link', { name: `ops-failed-review-${mode}` }).click();
    await page.getByRole('heading', { name: `Session ops-failed-review-${mode}`, level: 1 }).waitFor();
    await page.locator('[data-testid=latest-status]', { hasText: 'failed' }).waitFor();
  });

  it("shows each session's latest run status, and finds a session by its exact id", async () => {
    await seedRun(`ops-search-${mode}`, 'echo', 'cancelled');
    const page = await open('#/sessions');
    const listed = (await call(`${api.url}/api/sessions?limit=20`)).body.sessions.map((s: { id: string }) => s.id);
    await waitFor('the first page of sessions', async () => JSON.stringify(await rowIds(page, 'data-session')) === JSON.stringify(listed));
    await page.locator('tr[data-session] [data-testid=run-status] .badge').first().waitFor();
    for (const id of listed) {
      const latest = (await call(`${api.url}/api/runs?session_id=${encodeURIComponent(id)}&limit=1`)).body.runs[0];
      await page.locator(`tr[data-session="${id}"] [data-testid=run-status]`, { hasText: latest.status }).waitFor();
    }
    await expectAccessible(page, 'the sessions list with run status');

    const search = page.getByRole('search', { name: 'Sessions' });
    await search.getByLabel('Session id').fill(`ops-search-${mode}`);
    await search.getByRole('button', { name: 'Find' }).click();
    await waitFor('the one session found', async () => JSON.stringify(await rowIds(page, 'data-session')) === JSON.stringify([`ops-search-${mode}`]));
    expect(await page.locator('tr[data-session] [data-testid=run-status]').textContent()).toBe('cancelled');
    expect(await page.getByRole('navigation', { name: 'Pages of sessions' }).count()).toBe(0);
    await expectAccessible(page, 'a session found');

    await search.getByLabel('Session id').fill('ops-search');
    await search.getByRole('button', { name: 'Find' }).click();
    await page.getByText('No session has the id "ops-search" (the search takes an exact id).').waitFor();
    await search.getByRole('button', { name: 'Show all sessions' }).click();
    await waitFor('the whole list again', async () => JSON.stringify(await rowIds(page, 'data-session')) === JSON.stringify(listed));
  });

  it('shows decided approvals: the decision, who took it and when, with the comment', async () => {
    const asked = await call(`${api.url}/api/runs/wait`, { method: 'POST', json: { agent_id: 'human-review', input: { topic: 'decided' } } });
    expect(asked.body.status, JSON.stringify(asked.body)).toBe('interrupted');
    const answer = await call(`${api.url}/api/approval/respond`, { method: 'POST', json: { id: asked.body.approval_id, approved: false, comment: 'not this week' } });
    expect(answer.status).toBe(200);
    const decided = (await call(`${api.url}/api/approvals?status=decided&limit=20`)).body.approvals;
    const mine = decided.find((a: { id: string }) => a.id === asked.body.approval_id);
    expect(mine).toMatchObject({ status: 'rejected', comment: 'not this week', decided_by: expect.any(String), decided_at: expect.any(String) });

    const page = await open('#/inbox');
    await page.getByRole('navigation', { name: 'Approvals' }).getByRole('link', { name: 'Decided' }).click();
    await page.getByRole('heading', { name: 'Decided approvals', level: 1 }).waitFor();
    await waitFor('the decided list, newest decision first', async () => JSON.stringify(await rowIds(page, 'data-approval')) === JSON.stringify(decided.map((a: { id: string }) => a.id)));
    const row = page.locator(`tr[data-approval="${mine.id}"]`);
    expect(await row.locator('.badge').textContent()).toBe('rejected');
    expect(await row.locator('[data-testid=decided-by]').textContent()).toBe(mine.decided_by);
    expect(await row.locator('[data-testid=comment]').textContent()).toBe('not this week');
    expect(await row.locator('time').getAttribute('datetime')).toBe(mine.decided_at);
    expect(await row.textContent()).toContain('Publish the draft?');
    await expectAccessible(page, 'the decided approvals');
  });

  it("shows a request's JSON payload in the inbox, collapsed when long, and a decided request's JSON answer", async () => {
    const ask = async (payload: unknown) => {
      const asked = await call(`${api.url}/api/runs/wait`, { method: 'POST', json: { agent_id: 'ask-json', input: { payload } } });
      expect(asked.body.status, JSON.stringify(asked.body)).toBe('interrupted');
      return asked.body.approval_id as string;
    };
    const short = await ask({ city: 'Paris' });
    const long = await ask({ items: Array.from({ length: 20 }, (_, i) => i) });

    const page = await open(`#/inbox/${encodeURIComponent(short)}`);
    const payload = page.getByLabel('Payload of the request');
    await payload.waitFor();
    expect(await payload.textContent()).toBe(JSON.stringify({ city: 'Paris' }, null, 2));
    expect(await page.locator('details.json-details').getAttribute('open')).not.toBeNull();
    await expectAccessible(page, 'a request with a payload');

    const longPage = await open(`#/inbox/${encodeURIComponent(long)}`);
    const summary = longPage.locator('details.json-details summary');
    await summary.waitFor();
    expect(await summary.textContent()).toBe('Payload of the request (24 lines of JSON)');
    expect(await longPage.locator('details.json-details').getAttribute('open')).toBeNull();
    expect(await longPage.getByLabel('Payload of the request').isVisible()).toBe(false);
    await summary.click();
    expect(await longPage.getByLabel('Payload of the request').textContent()).toBe(JSON.stringify({ items: Array.from({ length: 20 }, (_, i) => i) }, null, 2));

    expect((await call(`${api.url}/api/approval/respond`, { method: 'POST', json: { id: short, resume: { city: 'Lyon' } } })).status).toBe(200);
    expect((await call(`${api.url}/api/approval/respond`, { method: 'POST', json: { id: long, approved: false } })).status).toBe(200);
    const decided = await open('#/approvals/decided');
    await decided.getByRole('heading', { name: 'Decided approvals', level: 1 }).waitFor();
    const answered = decided.locator(`tr[data-approval="${short}"] [data-testid=resume]`);
    await answered.waitFor();
    expect(await answered.getByLabel(`Answer to ${short}`).textContent()).toBe(JSON.stringify({ city: 'Lyon' }, null, 2));
    expect(await decided.locator(`tr[data-approval="${long}"] [data-testid=resume]`).textContent()).toBe('none');
    await expectAccessible(decided, 'decided approvals with an answer');
  });

  it('asks before cancelling a run: Keep leaves it, Confirm cancel cancels it', async () => {
    const waited = await call(`${api.url}/api/runs/wait`, { method: 'POST', json: { agent_id: 'human-review', input: { topic: 'confirm' } } });
    const runId: string = waited.body.id;
    const page = await open(`#/sessions/${waited.body.session_id}`);
    await page.getByRole('button', { name: `Cancel run ${runId}` }).click();
    await page.getByRole('button', { name: `Confirm cancel of run ${runId}` }).waitFor();
    await expectAccessible(page, 'a cancel to confirm');
    await page.getByRole('button', { name: `Keep run ${runId}` }).click();
    await page.getByRole('button', { name: `Cancel run ${runId}` }).waitFor();
    expect((await call(`${api.url}/api/runs/${runId}`)).body.status).toBe('interrupted');

    await page.getByRole('button', { name: `Cancel run ${runId}` }).click();
    await page.getByRole('button', { name: `Confirm cancel of run ${runId}` }).click();
    await page.locator(`tr[data-run="${runId}"] .badge`, { hasText: 'cancelled' }).waitFor();
    expect((await call(`${api.url}/api/runs/${runId}`)).body.status).toBe('cancelled');
  });

  it("shows a schedule's next run in the schedule's time zone", async () => {
    const created = await call(`${api.url}/api/schedules`, { method: 'POST', json: { agent_id: 'echo', cron_expr: '30 9 * * *', timezone: 'Asia/Kolkata' } });
    expect(created.status).toBe(201);
    const page = await open('#/schedules');
    const cell = page.locator(`tr[data-schedule="${created.body.id}"] [data-testid=next-run]`);
    await cell.waitFor();
    expect(await cell.locator('time').getAttribute('datetime')).toBe(created.body.next_run);
    // 09:30 in Kolkata, whatever the zone of the browser, with the zone named.
    expect(await cell.textContent()).toMatch(/09:30.*(GMT\+5:30|IST)/);
    await expectAccessible(page, 'the schedules list');
    expect((await call(`${api.url}/api/schedules/${created.body.id}`, { method: 'DELETE' })).status).toBe(200);
  });

  it('pages through 10,000 sessions and their runs, reading one page at a time', async () => {
    const store = api.backend.store;
    const ids = Array.from({ length: 10_000 }, (_, i) => `bulk-${mode}-${String(i).padStart(5, '0')}`);
    // A few writes at a time: each Redis command has a 1 s timeout, which a long queue of scripts on a busy machine passes.
    for (let i = 0; i < ids.length; i += 25) {
      await Promise.all(ids.slice(i, i + 25).map((id) => store.runs.createRun(TENANT, { run_id: `run-${id}`, session_id: id, agent_id: 'echo' })));
    }
    const page = await open('#/sessions');
    const asked: URL[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname === '/api/sessions' || (url.pathname === '/api/runs' && !url.searchParams.has('session_id'))) asked.push(url);
    });
    const expectPage = async (path: string, attribute: string, offset: number) => {
      const answer = (await call(`${api.url}${path}&limit=20&offset=${offset}`)).body;
      const expected = (answer.sessions ?? answer.runs).map((item: { id: string }) => item.id);
      await waitFor(`${path} at offset ${offset}`, async () => JSON.stringify(await rowIds(page, attribute)) === JSON.stringify(expected));
    };
    await expectPage('/api/sessions?', 'data-session', 0);
    await page.getByRole('navigation', { name: 'Pages of sessions' }).getByRole('button', { name: 'Next page' }).click();
    await expectPage('/api/sessions?', 'data-session', 20);
    await expectAccessible(page, 'the second page of 10,000 sessions');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Runs' }).click();
    // By agent, not by status: on Redis the reaper may fail these job-less queued runs meanwhile.
    await page.getByLabel('Agent').selectOption('echo');
    await expectPage('/api/runs?agent_id=echo', 'data-run', 0);
    await page.getByRole('navigation', { name: 'Pages of runs' }).getByRole('button', { name: 'Next page' }).click();
    await expectPage('/api/runs?agent_id=echo', 'data-run', 20);

    // Every list read asked for one page and one row more, never for everything.
    expect(asked.length).toBeGreaterThanOrEqual(4);
    for (const url of asked) expect(url.searchParams.get('limit'), String(url)).toBe('21');
  }, 240_000);
});
