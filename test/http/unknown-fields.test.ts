import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nearestName } from '../../src/domain/nearest-name.js';
import { call, startTestApi, type TestApi } from '../support/app.js';

let app: TestApi;

beforeAll(async () => {
  app = await startTestApi();
});

afterAll(async () => {
  await app.close();
});

describe('an unknown field in the body of an /api route is named, with the field it resembles', () => {
  it('{"agent", "inputs"} on POST /api/runs names both and suggests agent_id and input; no run is created', async () => {
    const response = await call(`${app.url}/api/runs`, { method: 'POST', json: { agent: 'echo', inputs: { text: 'hi' } } });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: {
        code: 'bad_request',
        message: 'body: unknown field "agent" (did you mean "agent_id"?); unknown field "inputs" (did you mean "input"?)',
      },
    });
    const runs = await call(`${app.url}/api/runs?limit=10`);
    expect(runs.body.runs).toHaveLength(0);
  });

  it('a field that resembles none is named without a guess', async () => {
    const response = await call(`${app.url}/api/runs`, { method: 'POST', json: { agent_id: 'echo', colour: 'blue' } });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toBe('body: unknown field "colour"');
  });

  it('on the waiting form and another route too (a misspelt field of POST /api/approval/respond)', async () => {
    const wait = await call(`${app.url}/api/runs/wait`, { method: 'POST', json: { agent_id: 'echo', wait: 1000 } });
    expect(wait.body.error.message).toBe('body: unknown field "wait" (did you mean "wait_ms"?)');
    const respond = await call(`${app.url}/api/approval/respond`, { method: 'POST', json: { id: 'x', aproved: true } });
    expect(respond.status).toBe(400);
    expect(respond.body.error.message).toBe('body: unknown field "aproved" (did you mean "approved"?)');
  });

  it('a LangGraph route answers as before (its own error shape, no guess)', async () => {
    const response = await call(`${app.url}/threads`, { method: 'POST', json: { metadata: {}, metadat: {} } });
    expect(response.status).toBe(400);
    expect(response.body.detail).toBe('body: Unrecognized key: "metadat"');
  });
});

describe('nearestName', () => {
  it.each([
    ['agent', ['agent_id', 'input', 'session_id'], 'agent_id'],
    ['inputs', ['agent_id', 'input', 'session_id'], 'input'],
    ['Agent_ID', ['agent_id', 'input'], 'agent_id'],
    ['sesion_id', ['agent_id', 'session_id'], 'session_id'],
    ['colour', ['agent_id', 'input', 'session_id'], undefined],
    ['x', ['id'], undefined],
  ])('%s among %j → %s', (name, known, expected) => {
    expect(nearestName(name, known)).toBe(expected);
  });
});
