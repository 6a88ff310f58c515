import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { builtInAgents } from '../../src/agents/index.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { startTestApi } from '../support/app.js';
import { startRedis } from '../support/redis.js';
import { exchange, fuzzProperty, loadTarget } from './property.js';
import { exactRequest } from './draft.js';
import { seedRuns } from './seed.js';

/**
 * Property-based fuzzing of every operation of /swagger/doc.json, served by the real app on a
 * real Redis, after seeding sessions, checkpoints and pending approvals through the API.
 * Fixed seed and case count: the same requests every run.
 */
const SEED = 42;
const RUNS_PER_OPERATION = 120;

const redis = await startRedis();
afterAll(() => redis.stop());
const agents = new AgentRegistry(builtInAgents);
const api = await startTestApi({ redisUrl: redis.url, agents, env: { SERVICE_RATE_LIMIT: 'off', LOG_LEVEL: 'error' } });
afterAll(() => api.close());
const seeded = await seedRuns(api, agents);
const target = await loadTarget(api.url, seeded.sessions, api.logs);

describe('fuzzing every operation of /swagger/doc.json', () => {
  it('has seeded data to aim at: sessions with checkpoints, pending approvals', () => {
    expect(seeded.sessions).toHaveLength(5);
    expect(seeded.approvals).toHaveLength(2);
    expect(target.operations.length).toBeGreaterThan(0);
  });

  it.each(target.operations.map((op) => [op.name, op] as const))('%s', async (_name, op) => {
    await fc.assert(fuzzProperty(target, op), { seed: SEED, numRuns: RUNS_PER_OPERATION });
  });
});

/** What the fuzzer found (fixed in c7b43a8), as fixed requests through the same checks: regressions. */
describe('reproductions of what the fuzzer found', () => {
  const json = { 'Content-Type': 'application/json' };
  const deep = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
  const cases = [
    [
      'a 5,000-deep array in a state patch is a 400, not a 500 (src/adapters/redis/store.ts statePairs: JSON.stringify overflows the stack)',
      'POST /api/sessions/state',
      exactRequest('POST', '/api/sessions/state?session_id=fuzz-echo-1', { headers: json, body: `{"state":{"x":${deep(5000)}}}`, why: 'deep nesting' }),
    ],
    [
      'a 5,000-deep array in a run input is a 400, not a 500 (store createRun)',
      'POST /api/runs',
      exactRequest('POST', '/api/runs', { headers: json, body: `{"agent_id":"echo","input":{"x":${deep(5000)}}}`, why: 'deep nesting' }),
    ],
    [
      'a 5,000-deep array in a schedule input is a 400, not a 500 (store createSchedule)',
      'POST /api/schedules',
      exactRequest('POST', '/api/schedules', { headers: json, body: `{"agent_id":"echo","cron_expr":"*/5 * * * *","input":{"x":${deep(5000)}}}`, why: 'deep nesting' }),
    ],
    [
      'Content-Encoding: gzip on bytes that are not gzip is a 400, not a 500 (zlib error rendered as internal)',
      'POST /api/runs',
      exactRequest('POST', '/api/runs', { headers: { ...json, 'Content-Encoding': 'gzip' }, body: '{"agent_id":"echo"}', why: 'Content-Encoding gzip, not encoded' }),
    ],
    [
      'after a 2 MiB body under Content-Encoding: deflate that is not deflate, the kept-alive connection still answers (the unread body blocks it)',
      'POST /api/runs',
      exactRequest('POST', '/api/runs', {
        headers: { ...json, 'Content-Encoding': 'deflate' },
        body: JSON.stringify({ agent_id: 'echo', input: { text: 'x'.repeat(2 * 1024 * 1024) } }),
        why: 'Content-Encoding deflate, not encoded, 2 MiB',
      }),
    ],
    [
      'a 17 kB query string is answered with the contract error body, not a bare 431 from the HTTP parser',
      'GET /api/sessions',
      exactRequest('GET', `/api/sessions?agent_id=${'x'.repeat(17_000)}`, { why: 'huge query' }),
    ],
  ] as const;

  it.each(cases)('%s', async (_name, operation, req) => {
    const op = target.operations.find((o) => o.name === operation);
    expect(op, `${operation} is in the document`).toBeDefined();
    const { problems, report } = await exchange(target, op!, req);
    expect(problems, report).toEqual([]);
  });
});
