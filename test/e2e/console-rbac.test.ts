import { SignJWT } from 'jose';
import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentRegistry } from '../../src/runtime/registry.js';
import agents from '../fixtures/agents.js';
import { call, type TestApi } from '../support/app.js';
import { expectAccessible, pageProblems, startConsoleApi, useConsoleHarness } from '../support/console.js';
import { waitFor } from '../support/wait.js';

/*
 * The console with API keys and RBAC on, on both backends: the credential typed in is kept in
 * sessionStorage and sent only in a header; a viewer sees the inbox read-only (the decision
 * buttons disabled) with each request's prompt and expiry (read by id), and the server refuses
 * the viewer's forced answer with 403.
 */

const USER_KEY = 'k-user-console-0123456789';
const VIEWER_KEY = 'k-view-console-0123456789';
const ENV = {
  SERVICE_AUTH: 'apikey',
  SERVICE_RBAC: 'true',
  SERVICE_API_KEYS: `${USER_KEY}:user:acme,${VIEWER_KEY}:viewer:acme`,
};

const harness = useConsoleHarness();

describe.each(['memory', 'redis'] as const)('the console with API keys and RBAC on %s', (mode) => {
  let api: TestApi;
  const asUser = { 'X-Api-Key': USER_KEY };

  beforeAll(async () => {
    // The fixture agents add `expiring`, whose request has an expiry.
    api = await startConsoleApi(harness.redisUrl(mode), { secured: true, env: ENV, agents: new AgentRegistry(agents) });
  });
  afterAll(async () => {
    await api?.close();
  });

  /** A tab signed in with `key`; every request URL it makes is recorded. */
  async function signIn(key: string, allowed: RegExp[] = []): Promise<{ page: Page; urls: string[] }> {
    const page = await harness.newTab(allowed);
    const urls: string[] = [];
    page.on('request', (request: Request) => urls.push(request.url()));
    await page.goto(`${api.url}/console/`);
    await page.getByLabel(/^API key/).fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    return { page, urls };
  }

  it('refuses a wrong key with a readable 401, and keeps a good one in sessionStorage only, never in a URL', async () => {
    const { page, urls } = await signIn('not-a-key', [/status of 401/]);
    await page.getByRole('alert').filter({ hasText: 'Your credential was not accepted (401)' }).waitFor();
    await expectAccessible(page, 'the sign-in screen');

    await page.getByLabel(/^API key/).fill(USER_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor();
    await page.getByRole('status', { name: 'Event stream: Live' }).waitFor();
    const storage = await page.evaluate(() => {
      const { sessionStorage, localStorage, document } = globalThis as any;
      return { session: JSON.stringify(sessionStorage), local: localStorage.length, cookie: document.cookie };
    });
    expect(storage.session).toContain(USER_KEY);
    expect([storage.local, storage.cookie]).toEqual([0, '']);
    expect(page.url()).not.toContain(USER_KEY);
    expect(urls.length).toBeGreaterThan(3);
    expect(urls.filter((url) => url.includes(USER_KEY) || url.includes('not-a-key'))).toEqual([]);

    // Reloading the tab keeps the sign-in; signing out forgets the key.
    await page.reload();
    await page.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel(/^API key/).waitFor();
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.length)).toBe(0);
  });

  it('shows a viewer the inbox read-only: the request appears live with its prompt and ticking age, approve is disabled, and a forced answer is 403', async () => {
    // Two 403s are expected: the role probe (GET /api/approval/pending) and the forced answer.
    const { page } = await signIn(VIEWER_KEY, [/status of 403/]);
    await page.getByText('Read-only (viewer)').waitFor();
    await page.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor();
    await page.getByRole('status', { name: 'Event stream: Live' }).waitFor();
    expect(await page.getByRole('link', { name: 'Start a run' }).count()).toBe(0);

    const waited = await call(`${api.url}/api/runs/wait`, { method: 'POST', headers: asUser, json: { agent_id: 'human-review', input: { topic: 'viewer' } } });
    expect(waited.body.status).toBe('interrupted');
    const approvalId: string = waited.body.approval_id;
    const row = page.locator(`tr[data-approval="${approvalId}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain(waited.body.session_id);
    // The events carry no prompt: GET /api/approvals/{id}, which a viewer may read, fills it in.
    await row.getByRole('cell', { name: 'Publish the draft?', exact: true }).waitFor();
    expect(await row.locator('[title]').getAttribute('title')).toBe(waited.body.approval.requested_at);
    expect(await row.getByRole('cell').nth(4).textContent()).toBe('never');

    // The age is worked out again every few seconds, with no event and no reload.
    const age = row.getByRole('cell').nth(3);
    const seconds = async () => Number(/^(\d+) s ago$/.exec((await age.textContent()) ?? '')?.[1] ?? Number.NaN);
    const before = await seconds();
    expect(before).toBeGreaterThanOrEqual(0);
    const after = await waitFor('the age of the request to tick', async () => {
      const now = await seconds();
      return now > before && now;
    });
    expect(after).toBeGreaterThan(before);

    // A request with an expiry shows it, from the same read.
    const expiring = await call(`${api.url}/api/runs/wait`, {
      method: 'POST',
      headers: asUser,
      json: { agent_id: 'expiring', input: { expires_in_ms: 3_600_000, on_timeout: 'approve' } },
    });
    expect(expiring.body.status).toBe('interrupted');
    const expiringRow = page.locator(`tr[data-approval="${expiring.body.approval_id}"]`);
    await expiringRow.getByRole('cell', { name: 'Proceed?', exact: true }).waitFor();
    const shown = await expiringRow.locator('time').getAttribute('datetime');
    expect(shown).toBe((await call(`${api.url}/api/approvals/${expiring.body.approval_id}`, { headers: asUser })).body.expires_at);
    await expectAccessible(page, 'the read-only inbox');
    await expiringRow.getByRole('link', { name: /^Open approval/ }).click();
    await page.getByRole('heading', { name: 'Proceed?', level: 2 }).waitFor();
    await page.getByText(/^in (60 min|1 h) \(then approve\)$/).waitFor();
    expect((await call(`${api.url}/api/runs/${expiring.body.id}/cancel`, { method: 'POST', headers: asUser })).status).toBe(200);
    await expiringRow.waitFor({ state: 'detached' });

    await row.getByRole('link', { name: /^Open approval/ }).click();
    await page.getByRole('heading', { name: 'Publish the draft?', level: 2 }).waitFor();
    const editor = page.getByLabel(/^Session state/);
    await editor.waitFor();
    expect(await editor.getAttribute('readonly')).not.toBeNull();
    expect(await page.getByRole('button', { name: 'Approve' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Reject' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Save state' }).count()).toBe(0);
    await expectAccessible(page, 'a read-only approval');

    // Forced from the page with the viewer's own credential: the server says no.
    const forced = await page.evaluate(async (id) => {
      const stored = JSON.parse((globalThis as any).sessionStorage.getItem('agentplane.console.credential') ?? '{}') as { value: string };
      const response = await fetch('/api/approval/respond', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Api-Key': stored.value },
        body: JSON.stringify({ id, approved: true }),
      });
      return { status: response.status, body: (await response.json()) as { error: { code: string } } };
    }, approvalId);
    expect(forced).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    const pending = await call(`${api.url}/api/approval/pending`, { headers: asUser });
    expect(pending.body.pending.map((a: { id: string }) => a.id)).toContain(approvalId);

    // Decided by a user: it leaves the viewer's inbox live.
    expect((await call(`${api.url}/api/approval/respond`, { method: 'POST', headers: asUser, json: { id: approvalId, approved: false } })).status).toBe(200);
    await row.waitFor({ state: 'detached' });

    // The decided list needs the user role (GET /api/approvals is 403 to a viewer): said, not asked.
    const asked: string[] = [];
    page.on('request', (request) => asked.push(new URL(request.url()).pathname));
    await page.getByRole('navigation', { name: 'Approvals' }).getByRole('link', { name: 'Decided' }).click();
    await page.getByRole('status').filter({ hasText: 'Your role (viewer) cannot list decided approvals' }).waitFor();
    expect(asked).not.toContain('/api/approvals');
    await expectAccessible(page, 'the decided approvals of a viewer');
  });

  it('lets a user answer with the key typed in', async () => {
    const waited = await call(`${api.url}/api/runs/wait`, { method: 'POST', headers: asUser, json: { agent_id: 'human-review', input: { topic: 'user' } } });
    const { page } = await signIn(USER_KEY);
    const row = page.locator(`tr[data-approval="${waited.body.approval_id}"]`);
    await row.getByRole('link', { name: /^Open approval/ }).click();
    await page.getByLabel(/^Comment/).fill('no');
    await page.getByRole('button', { name: 'Reject' }).click();
    await page.getByRole('status').filter({ hasText: /^Rejected/ }).waitFor();
    const done = await waitFor('the rejected run to end', async () => {
      const state = await call(`${api.url}/api/sessions/state?session_id=${waited.body.session_id}`, { headers: asUser });
      return state.body.node_id === '__end__' && state.body.state;
    });
    expect(done).toMatchObject({ approved: false, comment: 'no', outcome: 'discarded' });
  });
});

describe('answers the console shows in words', () => {
  it('shows 404, 409 and 429 as readable messages', async () => {
    const api = await startConsoleApi(undefined, { secured: true, env: { SERVICE_RATE_LIMIT: '12/60s' } });
    const page = await harness.browser.newPage();
    const problems = pageProblems(page, [/status of (404|409|429)/]);
    try {
      await page.goto(`${api.url}/console/#/sessions/no-such-session`);
      await page.getByRole('alert').filter({ hasText: 'Not found (404)' }).first().waitFor();

      const started = await call(`${api.url}/api/runs/wait`, { method: 'POST', json: { agent_id: 'human-review', session_id: 'busy-1' } });
      expect(started.body.status).toBe('interrupted');
      await page.goto(`${api.url}/console/#/runs/new`);
      await page.getByLabel('Agent').selectOption('human-review');
      await page.getByLabel(/^Session id/).fill('busy-1');
      await page.getByRole('button', { name: 'Start run' }).click();
      await page.getByRole('alert').filter({ hasText: /^Not possible right now \(409\): .+/ }).waitFor();

      await page.goto(`${api.url}/console/#/sessions`);
      const limited = page.getByRole('alert').filter({ hasText: /^Too many requests \(429\): try again in \d+ s\./ });
      for (let i = 0; i < 12 && !(await limited.isVisible()); i += 1) {
        const answered = page.waitForResponse((response) => new URL(response.url()).pathname === '/api/sessions');
        await page.getByRole('button', { name: 'Refresh' }).click();
        await answered;
      }
      await limited.waitFor();
      expect(problems).toEqual([]);
    } finally {
      await page.close();
      await api.close();
    }
  });
});

describe('the console with JWT', () => {
  it('signs in with a bearer token typed in and shows the inbox', async () => {
    const secret = 'console-test-secret-0123456789abcdef0123456789';
    const api = await startConsoleApi(undefined, { secured: true, env: { SERVICE_AUTH: 'jwt', SERVICE_JWT_SECRET: secret, SERVICE_RBAC: 'true' } });
    const page = await harness.browser.newPage();
    const problems = pageProblems(page);
    try {
      const token = await new SignJWT({ sub: 'ana', tenant_id: 'acme', roles: ['user'] })
        .setProtectedHeader({ alg: 'HS256' })
        .setExpirationTime('10m')
        .sign(new TextEncoder().encode(secret));
      await page.goto(`${api.url}/console/`);
      await page.getByLabel('Bearer token (JWT)').fill(token);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('status', { name: 'Event stream: Live' }).waitFor();
      await page.getByText('Signed in').waitFor();
      expect(await page.getByRole('link', { name: 'Start a run' }).count()).toBe(1);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
      await api.close();
    }
  });
});
