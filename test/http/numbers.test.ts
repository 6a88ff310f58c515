import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, startTestApi, type TestApi } from '../support/app.js';

/**
 * Numbers that JSON would change silently (review finding 8) are refused with a 400 naming the
 * field, and nothing is written: 1e400 would become null, 9007199254740993 would become …992.
 */
let app: TestApi;
beforeAll(async () => {
  app = await startTestApi();
});
afterAll(async () => {
  await app.close();
});

async function post(path: string, text: string) {
  return fetch(`${app.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: text }).then(async (r) => ({
    status: r.status,
    body: (await r.json()) as { error?: { code: string; message: string } },
  }));
}

it('refuses numbers that would not come back as sent, naming the field, and writes nothing', async () => {
  const started = await call(`${app.url}/api/runs`, { method: 'POST', json: { agent_id: 'echo', input: { a: 1 }, session_id: 'numbers-1' } });
  expect(started.status).toBe(202);
  await expect.poll(async () => (await call(`${app.url}/api/sessions/state?session_id=numbers-1`)).body.node_id).toBe('__end__');
  const before = (await call(`${app.url}/api/sessions/state?session_id=numbers-1`)).body;

  for (const [text, field] of [
    ['{"state":{"x":1e400}}', 'body.state.x'],
    ['{"state":{"big":9007199254740993}}', 'body.state.big'],
    ['{"state":{"list":[1,-1e999]}}', 'body.state.list[1]'],
  ] as const) {
    const answer = await post('/api/sessions/state?session_id=numbers-1', text);
    expect(answer.status, text).toBe(400);
    expect(answer.body.error).toMatchObject({ code: 'bad_request', message: expect.stringContaining(field) });
  }
  const runs = await post('/api/runs', '{"agent_id":"echo","input":{"n":123456789012345678901234567890}}');
  expect(runs.status).toBe(400);
  expect(runs.body.error?.message).toContain('body.input.n');

  expect((await call(`${app.url}/api/sessions/state?session_id=numbers-1`)).body).toEqual(before);
  // The largest exact integer, and ordinary floats, pass.
  const fine = await post('/api/sessions/state?session_id=numbers-1', '{"state":{"max":9007199254740991,"f":1.5e-300,"neg":-42}}');
  expect(fine.status).toBe(200);
  expect((await call(`${app.url}/api/sessions/state?session_id=numbers-1`)).body.state).toMatchObject({ max: 9007199254740991, f: 1.5e-300, neg: -42 });
});
