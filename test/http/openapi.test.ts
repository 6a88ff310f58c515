import SwaggerParser from '@apidevtools/swagger-parser';
import type Router from '@koa/router';
import type Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineRoute } from '../../src/http/route.js';
import { call, startTestApi, type TestApi } from '../support/app.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

interface OpenApiDoc {
  openapi: string;
  paths: Record<string, Record<string, { operationId?: string; parameters?: { name: string; in: string }[] }>>;
}

/** `/api/schedules/:id` → `/api/schedules/{id}` */
const toOpenApiPath = (pattern: string) => pattern.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/**
 * The `METHOD /path` pairs the koa router of a built app answers, found by walking its layers.
 * HEAD is left out: the router adds it to every GET by itself, and the document describes GET.
 */
function routerOperations(app: Koa): string[] {
  const dispatch = app.middleware.find((mw) => 'router' in mw) as { router?: Router } | undefined;
  if (!dispatch?.router) throw new Error('no koa router among the app middleware');
  return dispatch.router.stack
    .flatMap((layer) => layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${toOpenApiPath(String(layer.path))}`))
    .sort();
}

function documentOperations(doc: OpenApiDoc): string[] {
  return Object.entries(doc.paths)
    .flatMap(([path, item]) => Object.keys(item).filter((key) => METHODS.includes(key.toUpperCase() as never)).map((m) => `${m.toUpperCase()} ${path}`))
    .sort();
}

/** A concrete URL for a documented path: every `{param}` filled with a harmless value. */
const concrete = (url: string, path: string) => `${url}${path.replace(/\{[^}]+\}/g, 'some-id')}`;

/**
 * One request to a documented path: status, Allow and, for errors, the JSON body. A success
 * body is not read: it may be an endless stream (GET /api/events/stream).
 */
async function probe(url: string, method: string): Promise<{ status: number; allow: string[]; body: any }> {
  const response = await fetch(url, { method, signal: AbortSignal.timeout(10_000) });
  const allow = (response.headers.get('allow') ?? '').split(',').map((m) => m.trim());
  if (response.status < 400) {
    await response.body?.cancel();
    return { status: response.status, allow, body: undefined };
  }
  return { status: response.status, allow, body: await response.json().catch(() => undefined) };
}

async function fetchDoc(url: string): Promise<OpenApiDoc> {
  const response = await call(`${url}/swagger/doc.json`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  return response.body as OpenApiDoc;
}

/**
 * True when another documented path of `method` matches `path` read as a concrete path: GET
 * /api/runs/wait is GET /api/runs/{id} with the id "wait" (a 404 for that run, not a 405).
 */
function shadowedBy(doc: OpenApiDoc, path: string, method: string): boolean {
  const concretePath = path.replace(/\{[^}]+\}/g, 'some-id');
  return Object.entries(doc.paths).some(([other, item]) => {
    if (other === path || !Object.keys(item).includes(method.toLowerCase())) return false;
    return new RegExp(`^${other.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(concretePath);
  });
}

/** Asserts the router and the served document list the same operations, and HTTP agrees with both. */
async function expectRouterMatchesDocument(api: TestApi): Promise<OpenApiDoc> {
  const doc = await fetchDoc(api.url);
  const documented = documentOperations(doc);
  expect(documented.length).toBeGreaterThan(0);
  expect(routerOperations(api.api.app)).toEqual(documented);
  expect(api.api.routes.map((r) => `${r.method} ${toOpenApiPath(r.path)}`).sort()).toEqual(documented);

  for (const [path, item] of Object.entries(doc.paths)) {
    const allowed = Object.keys(item).map((m) => m.toUpperCase());
    for (const method of METHODS) {
      const response = await probe(concrete(api.url, path), method);
      const what = `${method} ${path} → ${response.status} ${JSON.stringify(response.body)}`;
      if (allowed.includes(method) || shadowedBy(doc, path, method)) {
        expect(response.status, what).not.toBe(405);
        expect(response.body?.error?.message ?? '', what).not.toMatch(/^No route matches/);
      } else {
        expect(response.status, what).toBe(405);
        expect(response.body, what).toMatchObject({ error: { code: 'method_not_allowed' } });
        expect(response.allow, what).toEqual(expect.arrayContaining(allowed));
      }
    }
  }
  return doc;
}

describe('OpenAPI document of the API app', () => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(async () => {
    await api?.close();
  });

  it('validates as OpenAPI 3.1 with swagger-parser', async () => {
    const doc = await fetchDoc(api.url);
    expect(doc.openapi).toMatch(/^3\.1\./);
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
  });

  it('lists exactly the routes and methods of the router, and every one is routed', async () => {
    const doc = await expectRouterMatchesDocument(api);
    for (const operation of ['GET /api/sessions', 'GET /api/sessions/state', 'POST /api/sessions/state', 'GET /api/traces', 'GET /health/ready', 'GET /metrics']) {
      expect(documentOperations(doc)).toContain(operation);
    }
  });

  it('an unknown path is 404 "No route matches", not 405', async () => {
    const response = await call(`${api.url}/api/nope/123`, { method: 'DELETE' });
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ error: { code: 'not_found', message: expect.stringMatching(/^No route matches/) } });
  });
});

describe('OpenAPI document with routes added by other components', () => {
  let api: TestApi;

  beforeAll(async () => {
    // A resource with a path parameter, as schedules and runs have: the walk must match
    // `/api/widgets/:id` in the router with `/api/widgets/{id}` in the document.
    const widget = (method: 'GET' | 'DELETE') =>
      defineRoute({
        method,
        path: '/api/widgets/:id',
        operationId: `${method.toLowerCase()}Widget`,
        summary: `${method} a widget`,
        tag: 'widgets',
        params: z.object({ id: z.string() }),
        responses: { 200: { description: 'The widget', schema: z.object({ id: z.string() }) } },
        handler: async ({ params }) => ({ status: 200, body: { id: params.id } }),
      });
    api = await startTestApi({ app: { extraRoutes: () => [widget('GET'), widget('DELETE')] } });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('documents path parameters and still matches the router', async () => {
    const doc = await expectRouterMatchesDocument(api);
    expect(doc.paths['/api/widgets/{id}']?.get?.parameters).toEqual([expect.objectContaining({ name: 'id', in: 'path' })]);
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
  });
});

describe('Swagger console switch', () => {
  let enabled: TestApi;
  let disabled: TestApi;

  beforeAll(async () => {
    enabled = await startTestApi();
    disabled = await startTestApi({ env: { SERVICE_SWAGGER: 'false' } });
  });
  afterAll(async () => {
    await enabled?.close();
    await disabled?.close();
  });

  it('redirects /swagger to /swagger/ and serves the console when enabled', async () => {
    const redirect = await fetch(`${enabled.url}/swagger`, { redirect: 'manual' });
    expect(redirect.status).toBeGreaterThanOrEqual(301);
    expect(redirect.status).toBeLessThanOrEqual(308);
    expect(redirect.headers.get('location')).toBe('/swagger/');
    for (const path of ['/swagger/', '/swagger/index.html']) {
      const page = await fetch(`${enabled.url}${path}`);
      expect(page.status, path).toBe(200);
      expect(page.headers.get('content-type'), path).toMatch(/^text\/html/);
      expect(await page.text(), path).toContain('swagger-ui');
    }
  });

  it.each(['/swagger', '/swagger/', '/swagger/doc.json', '/swagger/index.html'])(
    'SERVICE_SWAGGER=false: %s is 404 with the contract error body',
    async (path) => {
      const response = await call(`${disabled.url}${path}`, { redirect: 'manual' });
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.headers.get('x-request-id')).toBeTruthy();
      expect(response.body).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
    },
  );
});
