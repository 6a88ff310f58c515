import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineRoute } from '../../src/http/route.js';
import { errorResponses } from '../../src/http/schemas.js';
import { intQuery } from '../../src/http/validate.js';
import { startTestApi, type TestApi } from '../support/app.js';
import type { Operation } from './document.js';
import { exchange, fuzzProperty, loadTarget, type FuzzTarget } from './property.js';
import { exactRequest, type FuzzRequest } from './draft.js';

/**
 * The fuzz property can fail: on an app with deliberately broken extra routes it reports the
 * broken answers; and the checks accept a well-behaved event stream (their SSE branch).
 */
const brokenRoutes = () => [
  defineRoute({
    method: 'GET',
    path: '/api/selfcheck/items',
    operationId: 'selfcheckItems',
    summary: 'Answers a number where the schema says string once n > 50',
    tag: 'selfcheck',
    query: z.object({ n: intQuery(0, 100, 0) }),
    responses: {
      200: { description: 'Items', schema: z.object({ items: z.array(z.object({ id: z.string() })) }) },
      ...errorResponses(400),
    },
    handler: async ({ query }) => ({ status: 200, body: { items: [{ id: query.n > 50 ? query.n : String(query.n) }] } }),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/selfcheck/echo',
    operationId: 'selfcheckEcho',
    summary: 'Throws for names longer than three characters',
    tag: 'selfcheck',
    body: z.strictObject({ name: z.string().max(100) }),
    responses: { 200: { description: 'The name', schema: z.object({ name: z.string() }) }, ...errorResponses(400, 413, 415) },
    handler: async ({ body }) => {
      if (body.name.length > 3) throw new Error('a handler bug');
      return { status: 200, body: { name: body.name } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/selfcheck/stream',
    operationId: 'selfcheckStream',
    summary: 'A well-behaved event stream that stays open until the client leaves',
    tag: 'selfcheck',
    query: z.object({ topic: z.string().regex(/^[a-z]{1,8}$/).optional() }),
    responses: { 200: { description: 'Events', contentType: 'text/event-stream' }, ...errorResponses(400) },
    handler: async ({ ctx }) => {
      const stream = new PassThrough();
      ctx.req.on('close', () => stream.end());
      ctx.status = 200;
      ctx.type = 'text/event-stream';
      ctx.set('Cache-Control', 'no-cache');
      ctx.body = stream;
      stream.write('retry: 3000\n\n');
      return 'handled';
    },
  }),
];

let api: TestApi;
let target: FuzzTarget;

beforeAll(async () => {
  api = await startTestApi({ app: { extraRoutes: brokenRoutes }, env: { SERVICE_RATE_LIMIT: 'off', LOG_LEVEL: 'error' } });
  target = await loadTarget(api.url, [], api.logs);
});
afterAll(() => api?.close());

function operation(name: string): Operation {
  const op = target.operations.find((o) => o.name === name);
  if (!op) throw new Error(`${name} is not in the served document`);
  return op;
}

function fuzz(name: string): Promise<fc.RunDetails<[FuzzRequest]>> {
  return fc.check(fuzzProperty(target, operation(name)), { seed: 42, numRuns: 100 });
}

describe('the fuzz property on deliberately broken handlers', () => {
  it('reports a 200 body that does not match its documented schema', async () => {
    const details = await fuzz('GET /api/selfcheck/items');
    expect(details.failed).toBe(true);
    expect(String(details.errorInstance)).toMatch(/200 body does not match its documented schema: data\/items\/0\/id must be string/);
  });

  it('reports a handler that throws (500), with the logged error', async () => {
    const details = await fuzz('POST /api/selfcheck/echo');
    expect(details.failed).toBe(true);
    expect(String(details.errorInstance)).toMatch(/500: a 5xx answer/);
    expect(String(details.errorInstance)).toMatch(/a handler bug/);
  });

  it('accepts a well-behaved event stream: 200 text/event-stream cut off after its head, a bad query a 400 JSON error', async () => {
    const op = operation('GET /api/selfcheck/stream');
    expect(op.streams).toBe(true);
    const open = await exchange(target, op, exactRequest('GET', '/api/selfcheck/stream?topic=runs', { why: 'valid' }));
    expect(open.problems, open.report).toEqual([]);
    expect(open.report).toMatch(/→ 200/);
    const refused = await exchange(target, op, exactRequest('GET', '/api/selfcheck/stream?topic=NO', { why: 'topic not [a-z]' }));
    expect(refused.problems, refused.report).toEqual([]);
    expect(refused.report).toMatch(/→ 400 \{"error":\{"code":"bad_request"/);
  });
});
