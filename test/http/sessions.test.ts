import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/ports/store.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { useRedis } from '../support/redis.js';

const T = 'DefaultTenant';
const redis = useRedis();

async function seed(store: Store, options: { agent?: string; state?: Record<string, unknown> } = {}): Promise<string> {
  const id = randomUUID();
  const run = await store.runs.createRun(T, { run_id: randomUUID(), session_id: id, agent_id: options.agent ?? 'echo' });
  await store.sessions.appendCheckpoint(T, id, { patch: options.state ?? { keep: 'me', over: 1, nested: { a: 1, b: 2 } }, node_id: 'respond' });
  await store.runs.updateRun(T, run.id, { status: 'completed' });
  return id;
}

describe.each(['redis', 'memory'] as const)('session routes on %s', (mode) => {
  let app: TestApi;
  let store: Store;

  beforeAll(async () => {
    app = await startTestApi(mode === 'redis' ? { redisUrl: redis.url } : {});
    store = app.backend.store;
  });
  afterAll(async () => {
    await app.close();
  });

  it('lists sessions newest first with limit 50 / offset 0 by default, and filters by agent_id', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 52; i += 1) {
      ids.push(await seed(store, { agent: i % 2 === 0 ? 'echo' : 'human-review' }));
    }
    // Newest created_at first, ties (same millisecond) by id, descending.
    const created = await Promise.all(ids.map(async (id) => ({ id, at: (await store.sessions.getSession(T, id))!.created_at })));
    const expected = created
      .sort((a, b) => (a.at === b.at ? (a.id < b.id ? 1 : -1) : a.at < b.at ? 1 : -1))
      .map((s) => s.id);
    const page = await call(`${app.url}/api/sessions`);
    expect(page.status).toBe(200);
    expect(page.body.sessions).toHaveLength(50);
    expect(page.body.sessions.map((s: { id: string }) => s.id)).toEqual(expected.slice(0, 50));
    expect(page.body.sessions[0]).toEqual({
      id: expected[0],
      agent_id: expect.stringMatching(/^(echo|human-review)$/),
      tenant_id: T,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: expect.any(String),
      metadata: {},
    });
    const next = await call(`${app.url}/api/sessions?limit=5&offset=50`);
    expect(next.body.sessions.map((s: { id: string }) => s.id)).toEqual(expected.slice(50));
    const filtered = await call(`${app.url}/api/sessions?agent_id=human-review&limit=500`);
    expect(filtered.body.sessions).toHaveLength(26);
    expect(filtered.body.sessions.every((s: { agent_id: string }) => s.agent_id === 'human-review')).toBe(true);
  });

  it('finds one session by its exact id (session_id), with the other filters still applied; 400 for a malformed id', async () => {
    const id = await seed(store, { agent: 'human-review' });
    const found = await call(`${app.url}/api/sessions?session_id=${id}`);
    expect(found.status).toBe(200);
    expect(found.body.sessions).toEqual([await store.sessions.getSession(T, id)]);
    for (const query of [`session_id=${id.slice(0, 8)}`, 'session_id=nope', `session_id=${id}&agent_id=echo`, `session_id=${id}&offset=1`]) {
      expect((await call(`${app.url}/api/sessions?${query}`)).body, query).toEqual({ sessions: [] });
    }
    expect((await call(`${app.url}/api/sessions?session_id=${id}&agent_id=human-review`)).body.sessions).toHaveLength(1);
    const malformed = await call(`${app.url}/api/sessions?session_id=${encodeURIComponent('a b')}`);
    expect([malformed.status, malformed.body.error.code]).toEqual([400, 'bad_request']);
    expect(malformed.body.error.message).toMatch(/session_id/);
  });

  it.each(['abc', '-1', '0', '501', '1.5', ''])('answers 400 for limit=%s', async (limit) => {
    const response = await call(`${app.url}/api/sessions?limit=${limit}`);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('bad_request');
    expect(response.body.error.message).toMatch(/limit/);
  });

  it.each(['abc', '-1', '2.5'])('answers 400 for offset=%s', async (offset) => {
    const response = await call(`${app.url}/api/sessions?offset=${offset}`);
    expect(response.status).toBe(400);
    expect(response.body.error.message).toMatch(/offset/);
  });

  it('reads the latest checkpoint, 400 without session_id, 404 without checkpoint', async () => {
    const id = await seed(store);
    const state = await call(`${app.url}/api/sessions/state?session_id=${id}`);
    expect(state.status).toBe(200);
    expect(state.body).toMatchObject({ session_id: id, node_id: 'respond', seq_num: 1, state: { keep: 'me' } });
    expect(state.headers.get('etag')).toBe('"1"');
    const missing = await call(`${app.url}/api/sessions/state`);
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toMatch(/session_id/);
    const unknown = await call(`${app.url}/api/sessions/state?session_id=nope`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
    const bare = randomUUID();
    await store.runs.createRun(T, { run_id: randomUUID(), session_id: bare, agent_id: 'echo' });
    expect((await call(`${app.url}/api/sessions/state?session_id=${bare}`)).status).toBe(404);
    expect((await call(`${app.url}/api/sessions/state?session_id=${bare}`, { method: 'POST', json: { state: {} } })).status).toBe(404);
  });

  it('shallow-merges a patch: keys overwrite, absent keys kept, nested objects replaced; new id and seq_num + 1', async () => {
    const id = await seed(store);
    const before = await call(`${app.url}/api/sessions/state?session_id=${id}`);
    const patched = await call(`${app.url}/api/sessions/state?session_id=${id}`, {
      method: 'POST',
      json: { state: { over: 2, nested: { c: 3 }, added: [1, 2] } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.state).toEqual({ keep: 'me', over: 2, nested: { c: 3 }, added: [1, 2] });
    expect(patched.body.seq_num).toBe(before.body.seq_num + 1);
    expect(patched.body.checkpoint_id).not.toBe(before.body.checkpoint_id);
    expect(patched.body.node_id).toBe('respond');
    expect((await call(`${app.url}/api/sessions/state?session_id=${id}`)).body).toEqual(patched.body);
    const history = await call(`${app.url}/api/sessions/history?session_id=${id}`);
    expect(history.body.checkpoints.map((c: { seq_num: number }) => c.seq_num)).toEqual([2, 1]);
  });

  it('honours If-Match (412 on another seq_num) and answers 409 while a run is running', async () => {
    const id = await seed(store);
    const stale = await call(`${app.url}/api/sessions/state?session_id=${id}`, {
      method: 'POST',
      headers: { 'If-Match': '"7"' },
      json: { state: { x: 1 } },
    });
    expect(stale.status).toBe(412);
    expect(stale.body.error.code).toBe('precondition_failed');
    const fresh = await call(`${app.url}/api/sessions/state?session_id=${id}`, {
      method: 'POST',
      headers: { 'If-Match': '"1"' },
      json: { state: { x: 1 } },
    });
    expect(fresh.status).toBe(200);
    const bad = await call(`${app.url}/api/sessions/state?session_id=${id}`, {
      method: 'POST',
      headers: { 'If-Match': 'banana' },
      json: { state: { x: 1 } },
    });
    expect(bad.status).toBe(400);
    const run = await store.runs.createRun(T, { run_id: randomUUID(), session_id: id, agent_id: 'echo' });
    await store.runs.updateRun(T, run.id, { status: 'running' });
    const busy = await call(`${app.url}/api/sessions/state?session_id=${id}`, { method: 'POST', json: { state: { y: 1 } } });
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe('conflict');
    expect((await store.sessions.getCheckpoint(T, id))!.seq_num).toBe(2);
  });

  it('keeps 50 concurrent patches of distinct keys with seq_nums 2..51', async () => {
    const id = await seed(store);
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(`${app.url}/api/sessions/state?session_id=${id}`, { method: 'POST', json: { state: { [`key${i}`]: i } } }),
      ),
    );
    expect(responses.every((r) => r.status === 200)).toBe(true);
    expect(responses.map((r) => r.body.seq_num).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 2));
    const latest = await call(`${app.url}/api/sessions/state?session_id=${id}`);
    expect(latest.body.seq_num).toBe(51);
    for (let i = 0; i < 50; i += 1) expect(latest.body.state[`key${i}`]).toBe(i);
  });

  it('pages the checkpoint history and 404s an unknown session', async () => {
    const id = await seed(store);
    for (let i = 0; i < 4; i += 1) await store.sessions.appendCheckpoint(T, id, { patch: { i } });
    const page = await call(`${app.url}/api/sessions/history?session_id=${id}&limit=2&offset=1`);
    expect(page.body.checkpoints.map((c: { seq_num: number }) => c.seq_num)).toEqual([4, 3]);
    expect((await call(`${app.url}/api/sessions/history?session_id=nope`)).status).toBe(404);
    expect((await call(`${app.url}/api/sessions/history`)).status).toBe(400);
  });

  it('returns trace spans ordered by start; 400 without session_id, 404 for an unknown session', async () => {
    const id = await seed(store);
    const span = (span_id: string, start: string, parent_id = '') => ({ span_id, parent_id, name: span_id, start, end: start, attributes: {} });
    await store.sessions.addSpan(T, id, span('child', '2026-11-21T10:00:01.500Z', 'root'));
    await store.sessions.addSpan(T, id, span('root', '2026-11-21T10:00:01.000Z'));
    const traces = await call(`${app.url}/api/traces?session_id=${id}`);
    expect(traces.status).toBe(200);
    expect(traces.body.traces.map((s: { span_id: string }) => s.span_id)).toEqual(['root', 'child']);
    expect(traces.body.traces[0].parent_id).toBe('');
    expect((await call(`${app.url}/api/traces`)).status).toBe(400);
    expect((await call(`${app.url}/api/traces?session_id=nope`)).status).toBe(404);
  });
});
