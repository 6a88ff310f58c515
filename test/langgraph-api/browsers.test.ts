import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApi, type TestApi } from '../support/app.js';

/*
 * Browsers and proxies on the LangGraph Server API, as LangGraph's server answers them: CORS
 * (every origin by default; SERVICE_CORS_ORIGINS or the langgraph.json's `http.cors` narrow
 * it), preflights answered before authentication, and JSON bodies read whatever their
 * Content-Type says (a passthrough that sends text/plain).
 */

const OTHER_ORIGIN = 'https://chat.example.org';

/** A preflight of a browser on `origin` for POST `path` with a key header. */
const preflight = (api: TestApi, path: string, origin = OTHER_ORIGIN) =>
  fetch(`${api.url}${path}`, {
    method: 'OPTIONS',
    headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type,x-api-key' },
  });

function useApi(env: Record<string, string>): { api: TestApi } {
  const holder = {} as { api: TestApi };
  beforeAll(async () => {
    holder.api = await startTestApi({ env, secured: true });
  });
  afterAll(() => holder.api?.close());
  return holder;
}

describe('CORS by default: every origin, without credentials, preflights before authentication', () => {
  const ctx = useApi({ SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: 'secret-key-1', SERVICE_RATE_LIMIT: 'off' });

  it('OPTIONS /threads/search from another origin: 204 with the allow headers, no credential needed', async () => {
    const res = await preflight(ctx.api, '/threads/search');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toMatch(/\bPOST\b/);
    expect(res.headers.get('access-control-allow-headers')).toBe('content-type,x-api-key');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(await res.text()).toBe('');
  });

  it('answers, errors included, carry Access-Control-Allow-Origin and expose the headers a client reads', async () => {
    const refused = await call(`${ctx.api.url}/threads/search`, { method: 'POST', json: {}, headers: { Origin: OTHER_ORIGIN } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    const searched = await call(`${ctx.api.url}/threads/search`, { method: 'POST', json: {}, headers: { Origin: OTHER_ORIGIN, 'X-Api-Key': 'secret-key-1' } });
    expect(searched.status).toBe(200);
    expect(searched.headers.get('access-control-allow-origin')).toBe('*');
    expect(searched.headers.get('access-control-expose-headers')).toMatch(/content-location.*x-pagination-total/);
  });

  it('an OPTIONS without Origin is not a preflight: 405 as before', async () => {
    const res = await fetch(`${ctx.api.url}/threads/search`, { method: 'OPTIONS' });
    expect(res.status).toBe(405);
  });

  it('POST /threads with a JSON body sent as text/plain: 200, the body read as JSON', async () => {
    const res = await fetch(`${ctx.api.url}/threads`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain;charset=UTF-8', 'X-Api-Key': 'secret-key-1' },
      body: JSON.stringify({ metadata: { via: 'text/plain' } }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ thread_id: expect.any(String), metadata: { via: 'text/plain' } });
  });

  it('a body that is not JSON is still 400 there, and native routes keep their 415', async () => {
    const bad = await fetch(`${ctx.api.url}/threads`, { method: 'POST', headers: { 'Content-Type': 'text/plain', 'X-Api-Key': 'secret-key-1' }, body: 'not json' });
    expect(bad.status).toBe(400);
    const native = await fetch(`${ctx.api.url}/api/runs`, { method: 'POST', headers: { 'Content-Type': 'text/plain', 'X-Api-Key': 'secret-key-1' }, body: '{"agent_id":"echo"}' });
    expect(native.status).toBe(415);
  });
});

describe('SERVICE_CORS_ORIGINS: the origins allowed, or off', () => {
  const listed = useApi({ SERVICE_CORS_ORIGINS: `${OTHER_ORIGIN}, https://b.example.org` });
  // With authentication on: without it a request from another origin is refused outright (test/http/local-access.test.ts).
  const off = useApi({ SERVICE_CORS_ORIGINS: 'off', SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: 'secret-key-1' });

  it('a listed origin is echoed (with Vary: Origin); another gets no allow headers', async () => {
    const ok = await preflight(listed.api, '/threads/search');
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe(OTHER_ORIGIN);
    expect(ok.headers.get('vary')).toMatch(/Origin/);
    const other = await preflight(listed.api, '/threads/search', 'https://evil.example.net');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect(other.headers.get('access-control-allow-methods')).toBeNull();
  });

  it('off: no CORS headers, a preflight is an OPTIONS like any other (405)', async () => {
    const res = await preflight(off.api, '/threads/search');
    expect(res.status).toBe(405);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe("the langgraph.json's http.cors", () => {
  const folder = mkdtempSync(join(tmpdir(), 'agentplane-cors-'));
  const file = join(folder, 'langgraph.json');
  writeFileSync(
    file,
    JSON.stringify({
      graphs: { g: './g.ts:graph' },
      http: { cors: { allow_origin_regex: '^https://[a-z]+\\.example\\.org$', allow_credentials: true, allow_headers: ['content-type'], max_age: 600, expose_headers: ['x-custom'] } },
    }),
  );
  const ctx = useApi({ SERVICE_LANGGRAPH_JSON: file });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('its origin pattern, credentials, headers, max age and exposed headers (plus the two LangGraph always exposes)', async () => {
    const res = await preflight(ctx.api, '/threads/search');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(OTHER_ORIGIN);
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
    expect(res.headers.get('access-control-allow-headers')).toBe('content-type');
    expect(res.headers.get('access-control-max-age')).toBe('600');
    const answer = await call(`${ctx.api.url}/threads/search`, { method: 'POST', json: {}, headers: { Origin: OTHER_ORIGIN } });
    expect(answer.headers.get('access-control-expose-headers')).toBe('x-custom, content-location, x-pagination-total');
    const refused = await preflight(ctx.api, '/threads/search', 'https://example.com');
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe("http.cors.allow_origin_regex matches the whole origin", () => {
  const folder = mkdtempSync(join(tmpdir(), 'agentplane-cors-'));
  const file = join(folder, 'langgraph.json');
  writeFileSync(file, JSON.stringify({ graphs: { g: './g.ts:graph' }, http: { cors: { allow_origin_regex: 'https://.*\\.trusted\\.com', allow_credentials: true } } }));
  const ctx = useApi({ SERVICE_LANGGRAPH_JSON: file, SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: 'secret-key-1' });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('an origin the pattern matches only in part gets no allow headers, credentials or not', async () => {
    const ok = await preflight(ctx.api, '/threads/search', 'https://app.trusted.com');
    expect([ok.headers.get('access-control-allow-origin'), ok.headers.get('access-control-allow-credentials')]).toEqual(['https://app.trusted.com', 'true']);
    for (const origin of ['https://app.trusted.com.evil.net', 'https://x.trusted.comm', 'http://evil.net?https://a.trusted.com']) {
      const res = await preflight(ctx.api, '/threads/search', origin);
      expect(res.headers.get('access-control-allow-origin'), origin).toBeNull();
      expect(res.headers.get('access-control-allow-credentials'), origin).toBeNull();
      const answer = await call(`${ctx.api.url}/threads/search`, { method: 'POST', json: {}, headers: { Origin: origin, 'X-Api-Key': 'secret-key-1' } });
      expect(answer.headers.get('access-control-allow-origin'), origin).toBeNull();
    }
  });
});
