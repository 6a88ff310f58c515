import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/time.js';
import type { Run } from '../../src/domain/types.js';
import { send, startSecuredApi, type SecuredApi } from '../auth/secured-api.js';
import { useRedis } from '../support/redis.js';

/**
 * GET /api/runs without session_id (the tenant's runs, filtered and paged), GET /api/approvals
 * (by status, paged) and GET /api/approvals/{id}, through the real app with API keys and RBAC,
 * on both backends. The data is written through the store the app runs on.
 */

const A = 'ListTenant';
const B = 'OtherTenant';
const KEYS = { viewer: 'ls-viewer', user: 'ls-user', other: 'ls-other-user' };

const redis = useRedis();

describe.each(['memory', 'redis'] as const)('list routes on %s', (backend) => {
  let app: SecuredApi;
  const as = (key: string) => ({ 'X-Api-Key': key });
  const get = (path: string, key = KEYS.viewer) => send(`${app.url}${path}`, { headers: as(key) });
  const idsOf = (body: unknown, field: string) => ((body as Record<string, { id: string }[]>)[field] ?? []).map((x) => x.id);
  const runs: Record<'echoDone' | 'echoFailed' | 'reviewPaused' | 'reviewDone' | 'echoQueued' | 'reviewCancelled', Run> = {} as never;
  const approvals: Record<'pending' | 'approved' | 'cancelled', string> = {} as never;

  beforeAll(async () => {
    app = await startSecuredApi({
      SERVICE_AUTH: 'apikey',
      SERVICE_RBAC: 'true',
      SERVICE_API_KEYS: `${KEYS.viewer}:viewer:${A},${KEYS.user}:user:${A},${KEYS.other}:user:${B}`,
      ...(backend === 'redis' ? { REDIS_URL: redis.url } : {}),
    });
    const { store } = app.backend;
    // Time-ordered ids (as the API mints them): runs created in one millisecond list in creation order too.
    const start = (agent: string, sessionId: string = randomUUID(), tenant = A) =>
      store.runs.createRun(tenant, { run_id: newId(), session_id: sessionId, agent_id: agent, start: { node_id: 'n', input: {} } });
    const ask = (run: Run, tenant = A) =>
      store.approvals.createApproval(tenant, {
        id: `${run.id}.1`,
        session_id: run.session_id,
        run_id: run.id,
        agent_id: run.agent_id,
        node_id: 'review',
        prompt: 'Publish the draft?',
        requested_at: new Date().toISOString(),
      });
    runs.echoDone = await start('echo');
    runs.reviewDone = await start('human-review');
    runs.echoFailed = await start('echo');
    runs.reviewPaused = await start('human-review');
    approvals.approved = (await ask(runs.reviewDone)).id;
    approvals.pending = (await ask(runs.reviewPaused)).id;
    await store.approvals.decideApproval(A, approvals.approved, { approved: true, comment: 'ship it', decided_by: 'ana' });
    await store.runs.updateRun(A, runs.reviewDone.id, { status: 'completed' });
    await store.runs.updateRun(A, runs.echoDone.id, { status: 'completed' });
    await store.runs.updateRun(A, runs.echoFailed.id, { status: 'failed', error: 'boom' });
    runs.echoQueued = await start('echo', runs.echoDone.session_id);
    // A cancelled run closes its pending approval: decided after the approved one.
    runs.reviewCancelled = await start('human-review', runs.reviewDone.session_id);
    approvals.cancelled = (await ask(runs.reviewCancelled)).id;
    await store.runs.updateRun(A, runs.reviewCancelled.id, { status: 'cancelled', error: 'cancelled', by: 'bob' });
    const theirs = await start('echo', randomUUID(), B);
    await store.approvals.decideApproval(B, (await ask(theirs, B)).id, { approved: true, decided_by: 'x' });
  });
  afterAll(() => app.close());

  it("GET /api/runs: the tenant's runs newest first, to a viewer", async () => {
    const all = await get('/api/runs');
    expect(all.status).toBe(200);
    const names = ['reviewCancelled', 'echoQueued', 'reviewPaused', 'echoFailed', 'reviewDone', 'echoDone'] as const;
    expect(idsOf(all.body, 'runs')).toEqual(names.map((name) => runs[name].id));
    expect((all.body as { runs: Run[] }).runs[2]).toMatchObject({ id: runs.reviewPaused.id, status: 'interrupted', approval_id: approvals.pending });
  });

  it.each([
    ['?status=completed', ['reviewDone', 'echoDone']],
    ['?status=failed', ['echoFailed']],
    ['?status=cancelled&agent_id=human-review', ['reviewCancelled']],
    ['?agent_id=echo', ['echoQueued', 'echoFailed', 'echoDone']],
    ['?agent_id=echo&status=completed', ['echoDone']],
    ['?agent_id=human-review&status=interrupted', ['reviewPaused']],
    ['?agent_id=nobody', []],
    ['?status=completed&limit=1&offset=1', ['echoDone']],
    ['?limit=2&offset=2', ['reviewPaused', 'echoFailed']],
    ['?offset=6', []],
  ] as const)('GET /api/runs%s', async (query, expected) => {
    const answer = await get(`/api/runs${query}`);
    expect(answer.status).toBe(200);
    expect(idsOf(answer.body, 'runs')).toEqual(expected.map((name) => runs[name].id));
  });

  it('GET /api/runs?session_id= still lists one session, with the same filters', async () => {
    const session = runs.echoDone.session_id;
    expect(idsOf((await get(`/api/runs?session_id=${session}`)).body, 'runs')).toEqual([runs.echoQueued.id, runs.echoDone.id]);
    expect(idsOf((await get(`/api/runs?session_id=${session}&status=completed`)).body, 'runs')).toEqual([runs.echoDone.id]);
    expect((await get('/api/runs?session_id=missing-session')).status).toBe(404);
  });

  it.each(['?status=done', '?limit=0', '?limit=501', '?offset=-1', '?agent_id=', '?session_id=a%20b'])('GET /api/runs%s is 400', async (query) => {
    const answer = await get(`/api/runs${query}`);
    expect(answer.status).toBe(400);
    expect((answer.body as { error: { code: string } }).error.code).toBe('bad_request');
  });

  it("never lists another tenant's runs", async () => {
    const theirs = await get('/api/runs', KEYS.other);
    expect(idsOf(theirs.body, 'runs')).toHaveLength(1);
    expect(idsOf(theirs.body, 'runs')).not.toContain(runs.echoDone.id);
  });

  it('GET /api/approvals/{id}: a pending or decided request to a viewer; 404 when missing or of another tenant', async () => {
    const pending = await get(`/api/approvals/${approvals.pending}`);
    expect(pending.status).toBe(200);
    expect(pending.body).toMatchObject({ id: approvals.pending, status: 'pending', run_id: runs.reviewPaused.id, prompt: 'Publish the draft?' });
    const decided = await get(`/api/approvals/${approvals.approved}`);
    expect(decided.body).toMatchObject({ status: 'approved', comment: 'ship it', decided_by: 'ana', decided_at: expect.any(String) });
    const missing = await get(`/api/approvals/${randomUUID()}.1`);
    const ofA = await get(`/api/approvals/${approvals.pending}`, KEYS.other);
    expect(missing.status).toBe(404);
    expect(ofA).toMatchObject({ status: 404, body: missing.body });
  });

  it('GET /api/approvals?status=decided: newest decision first, paged, to a user; 403 to a viewer', async () => {
    const decided = await get('/api/approvals?status=decided', KEYS.user);
    expect(decided.status).toBe(200);
    expect((decided.body as { approvals: { id: string; status: string }[] }).approvals.map((a) => [a.id, a.status])).toEqual([
      [approvals.cancelled, 'cancelled'],
      [approvals.approved, 'approved'],
    ]);
    expect(idsOf((await get('/api/approvals?status=decided&limit=1&offset=1', KEYS.user)).body, 'approvals')).toEqual([approvals.approved]);
    expect((await get('/api/approvals?status=decided')).status).toBe(403);
    expect(idsOf((await get('/api/approvals?status=decided', KEYS.other)).body, 'approvals')).toHaveLength(1);
  });

  it('GET /api/approvals (status=pending by default) answers what GET /api/approval/pending answers', async () => {
    const inbox = await get('/api/approval/pending', KEYS.user);
    for (const path of ['/api/approvals', '/api/approvals?status=pending']) {
      const answer = await get(path, KEYS.user);
      expect(answer.status).toBe(200);
      expect((answer.body as { approvals: unknown[] }).approvals).toEqual((inbox.body as { pending: unknown[] }).pending);
    }
    expect(idsOf((await get('/api/approvals', KEYS.user)).body, 'approvals')).toEqual([approvals.pending]);
    expect((await get('/api/approvals?status=all', KEYS.user)).status).toBe(400);
  });
});
