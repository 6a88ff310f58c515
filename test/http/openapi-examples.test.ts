import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../fuzz/invariants.js';
import { call, startTestApi, type TestApi } from '../support/app.js';

interface Media {
  schema?: unknown;
  examples?: Record<string, { summary?: string; value: any }>;
}
interface OperationDoc {
  tags?: string[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
  security?: unknown[];
}
interface Doc {
  paths: Record<string, Record<string, OperationDoc>>;
  components?: { securitySchemes?: Record<string, any> };
}

const operations = (doc: Doc) =>
  Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, path, op })));

const firstExample = (media: Media | undefined) => Object.values(media?.examples ?? {})[0]?.value;

async function documentOf(api: TestApi): Promise<Doc> {
  const response = await call(`${api.url}/swagger/doc.json`);
  expect(response.status).toBe(200);
  return response.body as Doc;
}

describe('OpenAPI examples', () => {
  let api: TestApi;
  let doc: Doc;

  beforeAll(async () => {
    api = await startTestApi();
    doc = await documentOf(api);
  });
  afterAll(async () => {
    await api?.close();
  });

  it('gives every request body named examples, each valid for the route the router validates with', () => {
    const withBody = api.api.routes.filter((route) => route.body);
    expect(withBody.map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining(['POST /api/runs', 'POST /api/schedules', 'POST /api/sessions/state', 'POST /api/approval/respond']),
    );
    for (const route of withBody) {
      const name = `${route.method} ${route.path}`;
      const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      const examples = doc.paths[path]?.[route.method.toLowerCase()]?.requestBody?.content['application/json']?.examples;
      expect(Object.keys(examples ?? {}).length, name).toBeGreaterThan(0);
      for (const [key, example] of Object.entries(examples ?? {})) {
        const parsed = route.body!.safeParse(example.value);
        expect(parsed.success, `${name} example "${key}": ${parsed.error?.message}`).toBe(true);
      }
    }
  });

  it('the default body of POST /api/runs starts a run of echo, and run-and-wait completes it', async () => {
    const body = firstExample(doc.paths['/api/runs']?.post?.requestBody?.content['application/json']);
    expect(body).toMatchObject({ agent_id: 'echo' });
    for (let i = 0; i < 2; i++) {
      const started = await call(`${api.url}/api/runs`, { method: 'POST', json: body });
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      expect(started.body).toMatchObject({ status: 'queued' });
    }
    const waited = await call(`${api.url}/api/runs/wait`, {
      method: 'POST',
      json: firstExample(doc.paths['/api/runs/wait']?.post?.requestBody?.content['application/json']),
    });
    expect(waited.status, JSON.stringify(waited.body)).toBe(200);
    expect(waited.body).toMatchObject({ agent_id: 'echo', status: 'completed', state: { echoed: true } });
  });

  it('the default body of POST /api/schedules creates an echo schedule every five minutes', async () => {
    const body = firstExample(doc.paths['/api/schedules']?.post?.requestBody?.content['application/json']);
    const created = await call(`${api.url}/api/schedules`, { method: 'POST', json: body });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ agent_id: 'echo', cron_expr: '*/5 * * * *' });
  });

  it('shows under every error status the Error body (LangGraph routes: with detail) with an example per code, each code of that status', () => {
    const shown: string[] = [];
    for (const { name, op } of operations(doc)) {
      const langgraph = op.tags?.includes('langgraph') ?? false;
      for (const [status, response] of Object.entries(op.responses)) {
        const media = response.content?.['application/json'];
        // The one error status that is not an error body: GET /health/ready's 503 readiness report.
        if (Number(status) < 400 || (name === 'GET /health/ready' && status === '503')) continue;
        expect(media?.schema, `${name} ${status}`).toEqual({ $ref: `#/components/schemas/${langgraph ? 'LangGraphError' : 'Error'}` });
        const examples = media?.examples ?? {};
        expect(Object.keys(examples).length, `${name} ${status}`).toBeGreaterThan(0);
        for (const example of Object.values(examples)) {
          const { code, message } = example.value.error;
          expect(ERROR_STATUS[code], `${name} ${status} shows ${code}`).toBe(Number(status));
          expect(message, `${name} ${status}`).toMatch(/\S/);
          expect(example.value).toEqual(langgraph ? { error: example.value.error, detail: message } : { error: example.value.error });
          shown.push(`${status} ${code}`);
        }
      }
    }
    expect(new Set(shown)).toEqual(
      new Set(['400 bad_request', '400 invalid_cron', '400 unknown_agent', '401 unauthorized', '403 forbidden', '404 not_found',
        '409 conflict', '410 gone', '412 precondition_failed', '413 payload_too_large', '415 unsupported_media_type', '422 idempotency_key_reused', '429 rate_limited',
        '503 unavailable']),
    );
  });

  it('names the specific 400 codes where the API answers them, as it really does', async () => {
    const codes = (path: string) =>
      Object.values(doc.paths[path]?.post?.responses['400']?.content?.['application/json']?.examples ?? {}).map((e) => e.value.error.code);
    expect(codes('/api/runs')).toEqual(expect.arrayContaining(['bad_request', 'unknown_agent']));
    expect(codes('/api/schedules')).toEqual(expect.arrayContaining(['bad_request', 'invalid_cron', 'unknown_agent']));

    // What Swagger UI used to send by itself, from the schemas alone.
    const run = await call(`${api.url}/api/runs`, { method: 'POST', json: { agent_id: 'string' } });
    expect(run.status).toBe(400);
    expect(codes('/api/runs')).toContain(run.body.error.code);
    const schedule = await call(`${api.url}/api/schedules`, { method: 'POST', json: { agent_id: 'echo', cron_expr: 'string' } });
    expect(schedule.status).toBe(400);
    expect(codes('/api/schedules')).toContain(schedule.body.error.code);
  });
});

describe('OpenAPI security schemes follow SERVICE_AUTH', () => {
  const apis: TestApi[] = [];
  const start = async (env: Record<string, string>) => {
    const api = await startTestApi({ env });
    apis.push(api);
    return documentOf(api);
  };
  afterAll(async () => {
    await Promise.all(apis.map((api) => api.close()));
  });

  it('declares none with authentication off, so the console shows no "Authorize"', async () => {
    const doc = await start({ SERVICE_AUTH: 'none' });
    expect(doc.components?.securitySchemes).toBeUndefined();
    expect(operations(doc).filter(({ op }) => op.security)).toEqual([]);
  });

  it('declares a bearer scheme with jwt, required on /api/* and the LangGraph routes, not on probes, metrics, /ok, /info or generative UI files', async () => {
    const doc = await start({ SERVICE_AUTH: 'jwt', SERVICE_JWT_SECRET: 'a-test-secret-of-at-least-32-bytes!!' });
    expect(doc.components?.securitySchemes).toEqual({ bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } });
    for (const { name, path, op } of operations(doc)) {
      const gated = path.startsWith('/api/') || (op.tags?.includes('langgraph') && !['/ok', '/info', '/ui/{name}/{file}'].includes(path));
      expect(op.security, name).toEqual(gated ? [{ bearer: [] }] : undefined);
    }
  });

  it('declares the API key header with apikey', async () => {
    const doc = await start({ SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: 'k-test-1:user', SERVICE_API_KEY_HEADER: 'X-Agentplane-Key' });
    expect(doc.components?.securitySchemes).toEqual({ apiKey: { type: 'apiKey', in: 'header', name: 'X-Agentplane-Key' } });
  });
});
