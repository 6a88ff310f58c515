import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/domain/types.js';
import { useRedis } from '../support/redis.js';
import { watch } from '../support/sse.js';
import { waitFor } from '../support/wait.js';
import { expectNoSecretsIn, send, startSecuredApi, type Answer, type SecuredApi } from './secured-api.js';

/**
 * Tenant B acting on tenant A's data gets exactly what it gets for a resource that does not
 * exist (same status, same body once the requested id is masked), lists never show A's items,
 * A's data is unchanged afterwards, and B's event stream (live and replayed) never carries A's
 * events. The routes come from the declarations: a new gated route must be classified below.
 */

const A = { tenant: 'TenantA', key: 'iso-key-tenant-a' };
const B = { tenant: 'TenantB', key: 'iso-key-tenant-b' };
const asA = { 'X-Api-Key': A.key };
const asB = { 'X-Api-Key': B.key };

interface Targets {
  session: string;
  run: string;
  approval: string;
  schedule: string;
}

interface Probe {
  path: string;
  json?: unknown;
  /** Creates a resource named by the target id: run after every other probe. */
  creates?: boolean;
}

/** Requests aimed at one resource, by route. */
const resourceProbes: Record<string, (t: Targets) => Probe> = {
  'GET /api/sessions/state': (t) => ({ path: `/api/sessions/state?session_id=${t.session}` }),
  'POST /api/sessions/state': (t) => ({ path: `/api/sessions/state?session_id=${t.session}`, json: { state: { hijacked: true } } }),
  'GET /api/sessions/history': (t) => ({ path: `/api/sessions/history?session_id=${t.session}` }),
  'POST /api/sessions/resume': (t) => ({ path: `/api/sessions/resume?session_id=${t.session}` }),
  'DELETE /api/sessions': (t) => ({ path: `/api/sessions?session_id=${t.session}` }),
  'GET /api/traces': (t) => ({ path: `/api/traces?session_id=${t.session}` }),
  'GET /api/runs': (t) => ({ path: `/api/runs?session_id=${t.session}` }),
  'GET /api/runs/:id': (t) => ({ path: `/api/runs/${t.run}` }),
  'GET /api/approvals/:id': (t) => ({ path: `/api/approvals/${t.approval}` }),
  'POST /api/runs/:id/cancel': (t) => ({ path: `/api/runs/${t.run}/cancel` }),
  'POST /api/approval/respond': (t) => ({ path: '/api/approval/respond', json: { id: t.approval, approved: true, comment: 'not yours' } }),
  'GET /api/schedules/:id': (t) => ({ path: `/api/schedules/${t.schedule}` }),
  'GET /api/schedules/:id/history': (t) => ({ path: `/api/schedules/${t.schedule}/history` }),
  'DELETE /api/schedules/:id': (t) => ({ path: `/api/schedules/${t.schedule}` }),
  // B naming A's session id starts a run on a session of B's own, as for any unused id.
  'POST /api/runs': (t) => ({ path: '/api/runs', json: { agent_id: 'echo', session_id: t.session }, creates: true }),
  // A's LangGraph store item is keyed by A's session id (namespace ["iso"]).
  'GET /store/items': (t) => ({ path: `/store/items?namespace=iso&key=${t.session}` }),
  'DELETE /store/items': (t) => ({ path: '/store/items', json: { namespace: ['iso'], key: t.session } }),
  // B putting A's key writes an item of B's own.
  'PUT /store/items': (t) => ({ path: '/store/items', json: { namespace: ['iso'], key: t.session, value: { hijacked: true } }, creates: true }),
  // LangGraph threads are sessions.
  'GET /threads/:thread_id': (t) => ({ path: `/threads/${t.session}` }),
  'PATCH /threads/:thread_id': (t) => ({ path: `/threads/${t.session}`, json: { metadata: { hijacked: true } } }),
  'DELETE /threads/:thread_id': (t) => ({ path: `/threads/${t.session}` }),
  'POST /threads/:thread_id/copy': (t) => ({ path: `/threads/${t.session}/copy` }),
  'GET /threads/:thread_id/state': (t) => ({ path: `/threads/${t.session}/state` }),
  'GET /threads/:thread_id/state/:checkpoint_id': (t) => ({ path: `/threads/${t.session}/state/1` }),
  'POST /threads/:thread_id/state/checkpoint': (t) => ({ path: `/threads/${t.session}/state/checkpoint`, json: { checkpoint: { checkpoint_id: '1' } } }),
  'POST /threads/:thread_id/state': (t) => ({ path: `/threads/${t.session}/state`, json: { values: { hijacked: true } } }),
  'GET /threads/:thread_id/history': (t) => ({ path: `/threads/${t.session}/history` }),
  'POST /threads/:thread_id/history': (t) => ({ path: `/threads/${t.session}/history`, json: { limit: 10 } }),
  // LangGraph runs of a thread (A's session) and by run id (A's run); none creates a thread here.
  'POST /threads/:thread_id/runs': (t) => ({ path: `/threads/${t.session}/runs`, json: { assistant_id: 'echo', input: {} } }),
  'POST /threads/:thread_id/runs/wait': (t) => ({ path: `/threads/${t.session}/runs/wait`, json: { assistant_id: 'echo', input: {} } }),
  'POST /threads/:thread_id/runs/stream': (t) => ({ path: `/threads/${t.session}/runs/stream`, json: { assistant_id: 'echo', input: {} } }),
  'GET /threads/:thread_id/runs': (t) => ({ path: `/threads/${t.session}/runs` }),
  'GET /threads/:thread_id/runs/:run_id': (t) => ({ path: `/threads/${t.session}/runs/${t.run}` }),
  'DELETE /threads/:thread_id/runs/:run_id': (t) => ({ path: `/threads/${t.session}/runs/${t.run}` }),
  'POST /threads/:thread_id/runs/:run_id/cancel': (t) => ({ path: `/threads/${t.session}/runs/${t.run}/cancel` }),
  'GET /threads/:thread_id/runs/:run_id/join': (t) => ({ path: `/threads/${t.session}/runs/${t.run}/join` }),
  'GET /threads/:thread_id/runs/:run_id/stream': (t) => ({ path: `/threads/${t.session}/runs/${t.run}/stream` }),
  'GET /threads/:thread_id/stream': (t) => ({ path: `/threads/${t.session}/stream` }),
  // LangGraph's streaming protocol (v2) on A's thread: a command, and the thread's event stream.
  'POST /threads/:thread_id/commands': (t) => ({ path: `/threads/${t.session}/commands`, json: { id: 1, method: 'state.get', params: {} } }),
  'POST /threads/:thread_id/stream/events': (t) => ({ path: `/threads/${t.session}/stream/events`, json: { channels: ['values', 'lifecycle'] } }),
  'POST /runs/cancel': (t) => ({ path: '/runs/cancel', json: { run_ids: [t.run] } }),
  // B naming an id of A's kind creates a thread of B's own, as for any unused id (not A's session id:
  // the POST /api/runs probe gave B a session of that id).
  'POST /threads': (t) => ({ path: '/threads', json: { thread_id: `${t.session}.thread` }, creates: true }),
  // LangGraph crons are schedules; a thread's cron names the session.
  'POST /threads/:thread_id/runs/crons': (t) => ({ path: `/threads/${t.session}/runs/crons`, json: { assistant_id: 'echo', schedule: '0 0 1 1 *' } }),
  'PATCH /runs/crons/:cron_id': (t) => ({ path: `/runs/crons/${t.schedule}`, json: { enabled: false } }),
  'DELETE /runs/crons/:cron_id': (t) => ({ path: `/runs/crons/${t.schedule}` }),
};

/** Lists of the tenant, by route, and the ids of A's items they must not show. */
const idsIn = (field: string) => (body: unknown) => ((body as Record<string, { id: string }[]>)[field] ?? []).map((item) => item.id);
const listProbes: Record<string, { path: string; json?: unknown; ids: (body: unknown) => string[] }[]> = {
  'GET /api/sessions': [{ path: '/api/sessions?limit=500', ids: idsIn('sessions') }],
  'GET /api/runs': [
    { path: '/api/runs?limit=500', ids: idsIn('runs') },
    { path: '/api/runs?status=interrupted&agent_id=human-review', ids: idsIn('runs') },
  ],
  'GET /api/approval/pending': [{ path: '/api/approval/pending', ids: idsIn('pending') }],
  'GET /api/approvals': [
    { path: '/api/approvals?status=pending', ids: idsIn('approvals') },
    { path: '/api/approvals?status=decided', ids: idsIn('approvals') },
  ],
  'GET /api/schedules': [{ path: '/api/schedules', ids: idsIn('schedules') }],
  // A search in the body (POST): items by key, namespaces by their labels.
  'POST /store/items/search': [{ path: '/store/items/search', json: { namespace_prefix: [], limit: 1000 }, ids: (body) => (body as { items: { key: string }[] }).items.map((i) => i.key) }],
  'POST /store/namespaces': [{ path: '/store/namespaces', json: { limit: 1000 }, ids: (body) => (body as { namespaces: string[][] }).namespaces.map((n) => n.join('.')) }],
  'POST /threads/search': [{ path: '/threads/search', json: { limit: 1000 }, ids: (body) => (body as { thread_id: string }[]).map((t) => t.thread_id) }],
  'POST /runs/crons/search': [{ path: '/runs/crons/search', json: { limit: 1000 }, ids: (body) => (body as { cron_id: string }[]).map((c) => c.cron_id) }],
};

/**
 * The LangGraph assistants: the defaults are the agent registry, the same for every tenant; the
 * stored ones are the tenant's, each route's isolation tested in test/langgraph-api/assistants.test.ts
 * (tenant B gets 404 for A's assistant on every one of these routes and never sees it listed).
 */
const ASSISTANT_ROUTES = [
  'POST /assistants/search',
  'POST /assistants/count',
  'GET /assistants/:assistant_id',
  'GET /assistants/:assistant_id/graph',
  'GET /assistants/:assistant_id/schemas',
  'GET /assistants/:assistant_id/subgraphs',
  'GET /assistants/:assistant_id/subgraphs/:namespace',
  'POST /assistants/:assistant_id/versions',
  'POST /assistants/:assistant_id/latest',
  'POST /assistants',
  'PATCH /assistants/:assistant_id',
  'DELETE /assistants/:assistant_id',
];

/** Gated routes that read no tenant resource by id, each with the reason. */
const notResourceRoutes: Record<string, string> = {
  'GET /api/agents': 'the agent registry is the same for every tenant',
  'GET /api/queue': "counts of the caller's own tenant only (test/http/queue-route.test.ts)",
  'POST /api/schedules': 'creates a schedule of the caller; covered by the list probe',
  'GET /api/events/stream': 'covered by the event stream tests below',
  'POST /api/runs/wait': 'starts a run of the caller as POST /api/runs does (probed above) and answers only that run',
  'POST /api/runs/stream': 'starts a run of the caller as POST /api/runs does (probed above) and streams only that run',
  'POST /threads/count': 'counts what POST /threads/search lists (probed above)',
  'POST /runs/crons': 'creates a cron of the caller; covered by the list probe',
  'POST /runs/crons/count': 'counts what POST /runs/crons/search lists (probed above)',
  'POST /runs': 'a stateless LangGraph run in the background: starts a run of the caller on a new thread and answers only that run',
  'POST /runs/wait': 'a stateless LangGraph run: starts a run of the caller on a new thread and answers only that run',
  'POST /runs/stream': 'a stateless LangGraph run: starts a run of the caller on a new thread and streams only that run',
  ...Object.fromEntries(ASSISTANT_ROUTES.map((name) => [name, 'an assistant is an agent of the registry, the same for every tenant (and none can be written)'])),
  'POST /ui/:name': "langgraph.json's generative UI bundles are the project's code, the same for every tenant",
};

/** The answer with the requested id and server-minted ids masked, for comparison. */
function shape(answer: Answer, id: string): { status: number; body: string } {
  const body = JSON.stringify(answer.body ?? null)
    .split(id)
    .join('<id>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<ts>');
  return { status: answer.status, body };
}

function event(session: string, type: RunEvent['type'] = 'node_start'): RunEvent {
  return { type, session, run_id: `run-${session}`, agent_id: 'echo', ts: new Date().toISOString(), node: 'receive' };
}

/** An event stream of the caller, open; `until` waits for an event of `session`. */
async function openStream(url: string, headers: Record<string, string>) {
  const stream = watch(url, { headers });
  await stream.waitForOpen();
  return {
    frames: stream.received,
    sessions: () => stream.received.map((f) => f.event.session),
    until: (what: string, session: string) => waitFor(what, () => stream.received.some((f) => f.event.session === session)),
    close: () => stream.close(),
  };
}

const redis = useRedis();

describe.each(['memory', 'redis'] as const)('tenant isolation on %s', (backend) => {
  let app: SecuredApi;
  let routeNames: string[];
  let a: Targets;
  let logs: string[];

  // Each test on an app and tenant data of its own, so none depends on another or on their
  // order (the probe test gives B a session under A's session id, which B's lists would show).
  beforeEach(async () => {
    logs = [];
    a = { session: `a-session-${randomUUID()}`, run: randomUUID(), approval: `a-approval-${randomUUID()}`, schedule: '' };
    const bSession = `b-session-${randomUUID()}`;
    app = await startSecuredApi({
      SERVICE_AUTH: 'apikey',
      SERVICE_RBAC: 'true',
      SERVICE_API_KEYS: `${A.key}:admin:${A.tenant},${B.key}:admin:${B.tenant}`,
      ...(backend === 'redis' ? { REDIS_URL: redis.url } : {}),
    }, { logs });
    routeNames = app.api.routes.filter((r) => !r.public).map((r) => `${r.method} ${r.path}`);
    const { store } = app.backend;
    // Tenant A: a session paused at an approval, with checkpoints, a span and a run.
    await store.runs.createRun(A.tenant, { run_id: a.run, session_id: a.session, agent_id: 'human-review', start: { node_id: 'draft', input: { topic: 'a' } } });
    await store.sessions.appendCheckpoint(A.tenant, a.session, { patch: { draft: 'secret plans of A' }, node_id: 'review' });
    const now = new Date().toISOString();
    await store.sessions.addSpan(A.tenant, a.session, { span_id: randomUUID(), parent_id: '', name: 'run', start: now, end: now, attributes: { run_id: a.run } });
    await store.approvals.createApproval(A.tenant, {
      id: a.approval,
      session_id: a.session,
      node_id: 'review',
      prompt: 'Publish the draft?',
      requested_at: now,
      run_id: a.run,
      agent_id: 'human-review',
    });
    // And a session whose approval was decided (the decided list shows it).
    const decided = { session: `a-decided-${randomUUID()}`, run: randomUUID() };
    await store.runs.createRun(A.tenant, { run_id: decided.run, session_id: decided.session, agent_id: 'human-review', start: { node_id: 'review', input: {} } });
    await store.approvals.createApproval(A.tenant, {
      id: `${decided.run}.1`,
      session_id: decided.session,
      node_id: 'review',
      prompt: 'Publish the draft?',
      requested_at: now,
      run_id: decided.run,
      agent_id: 'human-review',
    });
    await store.approvals.decideApproval(A.tenant, `${decided.run}.1`, { approved: true, decided_by: 'a-admin' });
    if (routeNames.includes('POST /api/schedules')) {
      const created = await send(`${app.url}/api/schedules`, { method: 'POST', headers: asA, json: { agent_id: 'echo', cron_expr: '0 0 1 1 *' } });
      expect(created.status).toBe(201);
      a.schedule = (created.body as { id: string }).id;
    }
    // And a LangGraph store item keyed by its session id.
    await app.backend.graphItems.putItem(A.tenant, ['iso'], a.session, JSON.stringify({ secret: 'plans of A' }));
    // Tenant B has data of its own, so its lists are not trivially empty.
    await store.runs.createRun(B.tenant, { run_id: randomUUID(), session_id: bSession, agent_id: 'echo', start: { node_id: 'receive', input: {} } });
  });
  afterEach(async () => {
    await app.close();
    // Whatever the test did, neither API key is in any log line of its app.
    expectNoSecretsIn(logs, [A.key, B.key]);
  });

  it('classifies every gated route (a new route must be added to a table above)', () => {
    const known = new Set([...Object.keys(resourceProbes), ...Object.keys(listProbes), ...Object.keys(notResourceRoutes)]);
    expect(routeNames.filter((name) => !known.has(name))).toEqual([]);
  });

  it("never lists A's items to B, while A sees them", async () => {
    const lists = Object.entries(listProbes).filter(([n]) => routeNames.includes(n)).flatMap(([, probes]) => probes);
    for (const list of lists) {
      const name = list.path;
      const method = list.json === undefined ? 'GET' : 'POST';
      const seenByB = await send(`${app.url}${list.path}`, { method, headers: asB, json: list.json });
      const seenByA = await send(`${app.url}${list.path}`, { method, headers: asA, json: list.json });
      expect({ name, status: seenByB.status }).toEqual({ name, status: 200 });
      const ofA = list.ids(seenByA.body);
      expect(ofA.length, `${name}: A's own list`).toBeGreaterThan(0);
      expect(list.ids(seenByB.body).filter((id) => ofA.includes(id)), name).toEqual([]);
    }
    const sessionsOfB = await send(`${app.url}/api/sessions`, { headers: asB });
    expect((sessionsOfB.body as { sessions: { tenant_id: string }[] }).sessions.every((s) => s.tenant_id === B.tenant)).toBe(true);
  });

  it("never carries A's events on B's stream, live or replayed", async () => {
    const { events } = app.backend;
    const streamA = await openStream(`${app.url}/api/events/stream`, asA);
    const streamB = await openStream(`${app.url}/api/events/stream`, asB);
    try {
      // Both streams are live once each has received a warm-up event of its own tenant.
      const warmA = `a-warm-${randomUUID()}`;
      const warmB = `b-warm-${randomUUID()}`;
      await waitFor('live streams', async () => {
        await events.publish(A.tenant, event(warmA));
        await events.publish(B.tenant, event(warmB));
        return streamA.sessions().includes(warmA) && streamB.sessions().includes(warmB);
      });
      for (let i = 0; i < 5; i += 1) await events.publish(A.tenant, event(a.session, i === 4 ? 'completed' : 'node_start'));
      const markerB = `b-marker-${randomUUID()}`;
      await events.publish(B.tenant, event(markerB, 'completed'));
      await streamB.until("B's marker", markerB);
      await waitFor("A's events on A's stream", () => streamA.frames.filter((f) => f.event.session === a.session).length === 5);
      expect(streamB.sessions().filter((s) => s.startsWith('a-'))).toEqual([]);

      // Replay from the start of the retained log: B gets B's events only.
      const replay = await openStream(`${app.url}/api/events/stream?last_event_id=0-0`, asB);
      try {
        await replay.until("B's marker in the replay", markerB);
        expect(replay.sessions().filter((s) => s.startsWith('a-'))).toEqual([]);
        expect(replay.sessions()).toContain(warmB);
      } finally {
        replay.close();
      }
      // Naming A's session in B's stream filter yields nothing either.
      const filtered = await openStream(`${app.url}/api/events/stream?session=${a.session}&last_event_id=0-0`, asB);
      try {
        await events.publish(A.tenant, event(a.session, 'completed'));
        await events.publish(B.tenant, event(a.session.replace('a-', 'b-'), 'completed'));
        await streamB.until("B's last event", a.session.replace('a-', 'b-'));
        expect(filtered.frames).toEqual([]);
      } finally {
        filtered.close();
      }
    } finally {
      streamA.close();
      streamB.close();
    }
  });

  it("answers B on A's resources exactly as on missing ones, and leaves A's data alone", async () => {
    const before = await send(`${app.url}/api/sessions/state?session_id=${a.session}`, { headers: asA });
    expect(before.status).toBe(200);
    const probed = Object.entries(resourceProbes)
      .filter(([name]) => routeNames.includes(name))
      .sort(([, x], [, y]) => Number(Boolean(x({} as Targets).creates)) - Number(Boolean(y({} as Targets).creates)));
    expect(probed.length).toBeGreaterThan(0);

    for (const [name, probeOf] of probed) {
      const method = name.split(' ')[0]!;
      const missing: Targets = { session: `missing-${randomUUID()}`, run: randomUUID(), approval: `missing-${randomUUID()}`, schedule: randomUUID() };
      const onA = probeOf(a);
      const onMissing = probeOf(missing);
      const theirs = await send(`${app.url}${onA.path}`, { method, headers: asB, json: onA.json });
      const none = await send(`${app.url}${onMissing.path}`, { method, headers: asB, json: onMissing.json });
      const namesApproval = onA.path.includes(a.approval) || JSON.stringify(onA.json ?? '').includes(a.approval);
      const targetOf = (t: Targets) => (onA.path.includes(a.run) ? t.run : onA.path.includes(a.schedule || '\0') ? t.schedule : namesApproval ? t.approval : t.session);
      expect({ route: name, ...shape(theirs, targetOf(a)) }).toEqual({ route: name, ...shape(none, targetOf(missing)) });
      expect([401, 403]).not.toContain(theirs.status);
    }

    // A's data is as it was: same checkpoint, approval still pending, run still interrupted.
    const after = await send(`${app.url}/api/sessions/state?session_id=${a.session}`, { headers: asA });
    expect(after.body).toEqual(before.body);
    const pending = await send(`${app.url}/api/approval/pending`, { headers: asA });
    expect((pending.body as { pending: { id: string }[] }).pending.map((p) => p.id)).toEqual([a.approval]);
    const runs = await send(`${app.url}/api/runs?session_id=${a.session}`, { headers: asA });
    expect((runs.body as { runs: { id: string; status: string }[] }).runs).toEqual([expect.objectContaining({ id: a.run, status: 'interrupted' })]);
    if (a.schedule) expect((await send(`${app.url}/api/schedules/${a.schedule}`, { headers: asA })).status).toBe(200);
    expect(await app.backend.graphItems.getItem(A.tenant, ['iso'], a.session)).toMatchObject({ value: JSON.stringify({ secret: 'plans of A' }) });
  });

  it('writes neither API key into any log line, of a request refused or answered', async () => {
    expect((await send(`${app.url}/api/runs/${a.run}`, { headers: asB })).status).toBe(404);
    expect((await send(`${app.url}/api/runs/${a.run}`, { headers: asA })).status).toBe(200);
    expect((await send(`${app.url}/api/runs/${a.run}`, { headers: { 'X-Api-Key': 'not-a-key' } })).status).toBe(401);
    expect(logs.some((line) => line.includes('"status":404'))).toBe(true);
    expect(logs.some((line) => line.includes('"status":200'))).toBe(true);
    expectNoSecretsIn(logs, [A.key, B.key]);
  });
});
