import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authOptionsFromConfig } from '../../src/auth/options.js';
import { createAuthenticator } from '../../src/auth/create-authenticator.js';
import { loadConfig } from '../../src/config.js';
import { DEFAULT_TENANT } from '../../src/domain/types.js';
import { authenticateWith } from '../../src/http/middleware/authenticate.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { useRedis } from '../support/redis.js';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const BAD_CRON = ['* * * *', '* * * * * *', '61 * * * *', '* 24 * * *', 'hello', '', '*/0 * * * *'];

const redis = useRedis();

const post = (url: string, json: unknown, headers: Record<string, string> = {}) =>
  call(`${url}/api/schedules`, { method: 'POST', json, headers });

describe.each(['redis', 'memory'] as const)('schedule routes on %s', (mode) => {
  let app: TestApi;
  const triggers = () => app.backend.scheduler.list();

  beforeAll(async () => {
    app = await startTestApi(mode === 'redis' ? { redisUrl: redis.url } : {});
  });
  afterAll(async () => {
    await app.close();
  });

  it.each(BAD_CRON)('answers 400 invalid_cron for %j and stores and schedules nothing', async (cron_expr) => {
    const before = { schedules: (await call(`${app.url}/api/schedules?limit=500`)).body.schedules.length, triggers: (await triggers()).length };
    const response = await post(app.url, { agent_id: 'echo', cron_expr });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_cron');
    expect(response.body.error.message).toMatch(/^cron_expr: ./);
    expect((await call(`${app.url}/api/schedules?limit=500`)).body.schedules).toHaveLength(before.schedules);
    expect(await triggers()).toHaveLength(before.triggers);
  });

  it('gives the parser’s reason in the message', async () => {
    const response = await post(app.url, { agent_id: 'echo', cron_expr: '61 * * * *' });
    expect(response.body.error.message).toBe('cron_expr: Constraint error, got value 61 expected range 0-59');
  });

  it('creates a schedule with defaults: 201, Location, next_run; GET, list and the trigger agree', async () => {
    const before = Date.now();
    const created = await post(app.url, { agent_id: 'echo', cron_expr: '*/5 * * * *' });
    const after = Date.now();
    expect(created.status).toBe(201);
    const schedule = created.body;
    expect(created.headers.get('location')).toBe(`/api/schedules/${schedule.id}`);
    expect(schedule).toEqual({
      id: expect.any(String),
      agent_id: 'echo',
      cron_expr: '*/5 * * * *',
      input: {},
      new_session: true,
      timezone: 'UTC',
      next_run: expect.stringMatching(ISO_MS),
      created_at: expect.stringMatching(ISO_MS),
    });
    // The first tick after the moment of creation, somewhere between before and after.
    const next = Date.parse(schedule.next_run);
    expect(next).toBeGreaterThan(before);
    expect(next - after).toBeLessThanOrEqual(5 * 60_000);
    expect(new Date(next).getUTCMinutes() % 5).toBe(0);
    expect(new Date(next).getUTCSeconds()).toBe(0);
    expect((await call(`${app.url}${created.headers.get('location')}`)).body).toEqual(schedule);
    expect((await call(`${app.url}/api/schedules`)).body.schedules[0]).toEqual(schedule);
    expect(await triggers()).toContainEqual({ schedule_id: schedule.id, tenant: DEFAULT_TENANT, cron_expr: '*/5 * * * *', timezone: 'UTC' });
    expect(await call(`${app.url}/api/schedules/${schedule.id}/history`)).toMatchObject({ status: 200, body: { history: [] } });
  });

  it('keeps input, one reused session when new_session is false, and reads the expression in its time zone', async () => {
    const created = await post(app.url, {
      agent_id: 'human-review',
      cron_expr: ' 0  9 * * MON-FRI ',
      input: { topic: 'weekly', nested: { a: [1, 2] } },
      new_session: false,
      timezone: 'Europe/Berlin',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      cron_expr: '0 9 * * MON-FRI',
      input: { topic: 'weekly', nested: { a: [1, 2] } },
      new_session: false,
      timezone: 'Europe/Berlin',
      session_id: expect.any(String),
    });
    // 09:00 in Berlin is 07:00 or 08:00 UTC (summer or winter time).
    expect([7, 8]).toContain(new Date(created.body.next_run).getUTCHours());
    expect(await triggers()).toContainEqual(expect.objectContaining({ schedule_id: created.body.id, timezone: 'Europe/Berlin' }));
  });

  it.each([
    [{ agent_id: 'nope', cron_expr: '* * * * *' }, 'unknown_agent', /nope/],
    [{ agent_id: 'echo', cron_expr: '* * * * *', timezone: 'Mars/Olympus' }, 'bad_request', /timezone/],
    [{ cron_expr: '* * * * *' }, 'bad_request', /body\.agent_id/],
    [{ agent_id: 'echo' }, 'bad_request', /body\.cron_expr/],
    [{ agent_id: 'echo', cron_expr: 5 }, 'bad_request', /body\.cron_expr/],
    [{ agent_id: 'echo', cron_expr: '* * * * *', input: [1] }, 'bad_request', /body\.input/],
    [{ agent_id: 'echo', cron_expr: '* * * * *', new_session: 'no' }, 'bad_request', /body\.new_session/],
    [{ agent_id: 'echo', cron_expr: '* * * * *', extra: 1 }, 'bad_request', /extra/],
  ])('answers 400 for %j', async (body, code, message) => {
    const count = (await triggers()).length;
    const response = await post(app.url, body);
    expect(response.status).toBe(400);
    expect(response.body.error).toEqual({ code, message: expect.stringMatching(message) });
    expect(await triggers()).toHaveLength(count);
  });

  it('deletes a schedule and its trigger; GET, DELETE and history then answer 404', async () => {
    const { body: schedule } = await post(app.url, { agent_id: 'echo', cron_expr: '* * * * *' });
    const url = `${app.url}/api/schedules/${schedule.id}`;
    expect(await call(url, { method: 'DELETE' })).toMatchObject({ status: 200, body: { id: schedule.id, status: 'deleted' } });
    expect((await triggers()).map((t) => t.schedule_id)).not.toContain(schedule.id);
    for (const response of [await call(url), await call(url, { method: 'DELETE' }), await call(`${url}/history`)]) {
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    expect((await call(`${app.url}/api/schedules?limit=500`)).body.schedules.map((s: { id: string }) => s.id)).not.toContain(schedule.id);
  });

  it('lists newest first with limit and offset; 400 for a bad limit', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      ids.push((await post(app.url, { agent_id: 'echo', cron_expr: `${i} * * * *` })).body.id);
      await new Promise((r) => setTimeout(r, 2));
    }
    const page = await call(`${app.url}/api/schedules?limit=2`);
    expect(page.body.schedules.map((s: { id: string }) => s.id)).toEqual([ids[2], ids[1]]);
    expect((await call(`${app.url}/api/schedules?limit=1&offset=2`)).body.schedules[0].id).toBe(ids[0]);
    expect((await call(`${app.url}/api/schedules?limit=0`)).status).toBe(400);
  });
});

describe.each(['redis', 'memory'] as const)('schedule tenant isolation with API keys on %s', (mode) => {
  const env = {
    SERVICE_AUTH: 'apikey',
    SERVICE_API_KEYS: 'key-acme:user:acme,key-globex:user:globex,key-viewer:viewer:acme',
    SERVICE_RBAC: 'true',
  };
  const as = (key: string) => ({ 'X-Api-Key': key });
  let app: TestApi;

  beforeAll(async () => {
    const authenticate = authenticateWith(createAuthenticator(authOptionsFromConfig(loadConfig(env))));
    app = await startTestApi({ ...(mode === 'redis' ? { redisUrl: redis.url } : {}), env, app: { authenticate } });
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers another tenant’s schedule exactly like a missing one on every route', async () => {
    const created = await post(app.url, { agent_id: 'echo', cron_expr: '* * * * *' }, as('key-acme'));
    expect(created.status).toBe(201);
    const url = `${app.url}/api/schedules/${created.body.id}`;
    const missing = `${app.url}/api/schedules/00000000-0000-7000-8000-000000000000`;
    for (const target of [url, missing]) {
      for (const response of [
        await call(target, { headers: as('key-globex') }),
        await call(`${target}/history`, { headers: as('key-globex') }),
        await call(target, { method: 'DELETE', headers: as('key-globex') }),
      ]) {
        expect(response.status).toBe(404);
        expect(response.body.error).toEqual({ code: 'not_found', message: 'The schedule was not found.' });
      }
    }
    expect((await call(`${app.url}/api/schedules`, { headers: as('key-globex') })).body.schedules).toEqual([]);
    expect((await call(url, { headers: as('key-acme') })).status).toBe(200);
    expect((await call(`${url}/history`, { headers: as('key-viewer') })).status).toBe(200);
    expect((await call(`${app.url}/api/schedules`, { headers: as('key-acme') })).body.schedules.map((s: { id: string }) => s.id)).toEqual([
      created.body.id,
    ]);
    expect(await app.backend.scheduler.list()).toContainEqual(expect.objectContaining({ schedule_id: created.body.id, tenant: 'acme' }));
  });

  it('needs a credential (401) and the user role to create or delete (403)', async () => {
    expect((await call(`${app.url}/api/schedules`)).status).toBe(401);
    const created = await post(app.url, { agent_id: 'echo', cron_expr: '* * * * *' }, as('key-viewer'));
    expect(created.status).toBe(403);
    const mine = await post(app.url, { agent_id: 'echo', cron_expr: '* * * * *' }, as('key-acme'));
    expect((await call(`${app.url}/api/schedules/${mine.body.id}`, { method: 'DELETE', headers: as('key-viewer') })).status).toBe(403);
    expect((await call(`${app.url}/api/schedules/${mine.body.id}`, { method: 'DELETE', headers: as('key-acme') })).status).toBe(200);
  });
});

describe('SERVICE_SCHEDULES=false', () => {
  it('detaches the schedule routes: 404 and absent from the OpenAPI document', async () => {
    const app = await startTestApi({ env: { SERVICE_SCHEDULES: 'false' } });
    try {
      expect((await call(`${app.url}/api/schedules`)).status).toBe(404);
      expect((await post(app.url, { agent_id: 'echo', cron_expr: '* * * * *' })).status).toBe(404);
      expect((await call(`${app.url}/api/schedules/x/history`)).status).toBe(404);
      const paths = Object.keys((await call(`${app.url}/swagger/doc.json`)).body.paths);
      expect(paths.some((p) => p.startsWith('/api/schedules'))).toBe(false);
      expect(paths).toContain('/api/runs');
    } finally {
      await app.close();
    }
  });

  it('documents the schedule routes when attached', async () => {
    const app = await startTestApi();
    try {
      const { paths } = (await call(`${app.url}/swagger/doc.json`)).body;
      expect(Object.keys(paths['/api/schedules'])).toEqual(['get', 'post']);
      expect(Object.keys(paths['/api/schedules/{id}'])).toEqual(['get', 'delete']);
      expect(Object.keys(paths['/api/schedules/{id}/history'])).toEqual(['get']);
    } finally {
      await app.close();
    }
  });
});
