import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createWorker } from '../../src/main/worker-server.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { useRedis } from '../support/redis.js';

/*
 * A server without authentication (SERVICE_AUTH=none) is for this machine: it listens on
 * loopback unless told otherwise, answers only loopback or SERVICE_ALLOWED_HOSTS names in Host
 * (a DNS-rebinding name is refused), and web pages of other origins can neither read it (CORS:
 * loopback origins only, unless configured) nor drive it blind (a request with a foreign Origin
 * is refused before anything runs).
 */

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** A request with a Host header of our choice (fetch does not let one set it). */
function send(api: { url: string }, path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  const { port } = new URL(api.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          // Not JSON: kept as text.
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

function useApi(env: Record<string, string>): { api: TestApi } {
  const holder = {} as { api: TestApi };
  beforeAll(async () => {
    holder.api = await startTestApi({ env, secured: true });
  });
  afterAll(() => holder.api?.close());
  return holder;
}

const EVIL = 'https://evil.example';
const RUN_WAIT = JSON.stringify({ assistant_id: 'echo', input: { message: 'from a web page' } });

describe('the listen address follows authentication', () => {
  it('SERVICE_AUTH=none (the default): loopback; with authentication: every interface; SERVICE_HOST wins', () => {
    expect(loadConfig({}).SERVICE_HOST).toBe('127.0.0.1');
    expect(loadConfig({ SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: 'k1' }).SERVICE_HOST).toBe('0.0.0.0');
    expect(loadConfig({ SERVICE_HOST: '0.0.0.0' }).SERVICE_HOST).toBe('0.0.0.0');
    expect(loadConfig({ SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: 'k1', SERVICE_HOST: '127.0.0.1' }).SERVICE_HOST).toBe('127.0.0.1');
  });

  it('SERVICE_ALLOWED_HOSTS: names without a port, or * alone; anything else names the variable', () => {
    expect(loadConfig({ SERVICE_ALLOWED_HOSTS: 'api.example.com, 10.0.0.5,[fd00::1]' }).SERVICE_ALLOWED_HOSTS).toEqual(['api.example.com', '10.0.0.5', '[fd00::1]']);
    expect(loadConfig({ SERVICE_ALLOWED_HOSTS: '*' }).SERVICE_ALLOWED_HOSTS).toEqual(['*']);
    for (const bad of ['api.example.com:8420', '*,api.example.com', 'http://api.example.com']) {
      expect(() => loadConfig({ SERVICE_ALLOWED_HOSTS: bad }), bad).toThrow(/SERVICE_ALLOWED_HOSTS/);
    }
  });
});

describe('SERVICE_AUTH=none: Host names', () => {
  const ctx = useApi({});

  it('a DNS-rebinding name is refused 403 with the JSON error, on every route, probes included', async () => {
    for (const path of ['/info', '/health/live', '/api/sessions', '/console/']) {
      const res = await send(ctx.api, path, { headers: { Host: 'rebind.evil.example:8420' } });
      expect([res.status, res.body?.error?.code], path).toEqual([403, 'forbidden']);
      expect(res.body.error.message).toMatch(/SERVICE_ALLOWED_HOSTS/);
      expect(res.headers['x-request-id']).toEqual(expect.any(String));
    }
    const run = await send(ctx.api, '/runs/wait', { method: 'POST', headers: { Host: 'rebind.evil.example', 'Content-Type': 'application/json' }, body: RUN_WAIT });
    expect([run.status, run.body.error.code]).toEqual([403, 'forbidden']);
  });

  it('loopback names are answered, with any port and in any case', async () => {
    for (const host of ['localhost:8420', 'LOCALHOST', '127.0.0.1:1', '[::1]:8420', 'localhost.']) {
      expect((await send(ctx.api, '/health/live', { headers: { Host: host } })).status, host).toBe(200);
    }
  });
});

describe('SERVICE_ALLOWED_HOSTS', () => {
  const listed = useApi({ SERVICE_HOST: '0.0.0.0', SERVICE_ALLOWED_HOSTS: 'agentplane.internal' });
  const any = useApi({ SERVICE_ALLOWED_HOSTS: '*' });
  const authenticated = useApi({ SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: 'secret-key-1' });

  it('adds its names to the loopback ones, whatever the port', async () => {
    expect((await send(listed.api, '/health/live', { headers: { Host: 'agentplane.internal:80' } })).status).toBe(200);
    expect((await send(listed.api, '/health/live', { headers: { Host: 'localhost' } })).status).toBe(200);
    expect((await send(listed.api, '/health/live', { headers: { Host: 'other.internal' } })).status).toBe(403);
  });

  it('* answers any name; with authentication on and nothing set, any name is answered', async () => {
    expect((await send(any.api, '/health/live', { headers: { Host: 'rebind.evil.example' } })).status).toBe(200);
    expect((await send(authenticated.api, '/health/live', { headers: { Host: 'rebind.evil.example' } })).status).toBe(200);
  });
});

describe('SERVICE_AUTH=none: web pages of other origins', () => {
  const ctx = useApi({});
  const configured = useApi({ SERVICE_CORS_ORIGINS: 'https://chat.example.org' });

  it('a page elsewhere cannot drive it: its preflight and its blind text/plain POST are refused, nothing is created', async () => {
    const preflight = await send(ctx.api, '/runs/wait', {
      method: 'OPTIONS',
      headers: { Host: 'localhost:8420', Origin: EVIL, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
    });
    expect(preflight.status).toBe(403);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    const blind = await send(ctx.api, '/threads', {
      method: 'POST',
      headers: { Host: 'localhost:8420', Origin: EVIL, 'Content-Type': 'text/plain;charset=UTF-8' },
      body: JSON.stringify({ metadata: { via: 'evil' } }),
    });
    expect([blind.status, blind.body.error.code]).toEqual([403, 'forbidden']);
    expect(blind.body.error.message).toMatch(/SERVICE_CORS_ORIGINS/);
    const search = await send(ctx.api, '/threads/search', { method: 'POST', headers: { Host: 'localhost', 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { via: 'evil' } }) });
    expect([search.status, search.body]).toEqual([200, []]);
  });

  it('a page on a loopback origin (a local chat UI) may call it: its origin is echoed', async () => {
    const origin = 'http://localhost:3000';
    const preflight = await send(ctx.api, '/runs/wait', {
      method: 'OPTIONS',
      headers: { Host: 'localhost:8420', Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
    });
    expect([preflight.status, preflight.headers['access-control-allow-origin']]).toEqual([204, origin]);
    const run = await send(ctx.api, '/runs/wait', { method: 'POST', headers: { Host: 'localhost:8420', Origin: origin, 'Content-Type': 'application/json' }, body: RUN_WAIT });
    expect([run.status, run.headers['access-control-allow-origin']]).toEqual([200, origin]);
  });

  it('its own pages (same origin as the Host) may call it', async () => {
    const res = await send(ctx.api, '/threads/search', { method: 'POST', headers: { Host: 'localhost:8420', Origin: 'http://localhost:8420', 'Content-Type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(200);
  });

  it('SERVICE_CORS_ORIGINS names the origins allowed instead; others are refused', async () => {
    const ok = await send(configured.api, '/threads/search', { method: 'POST', headers: { Host: 'localhost', Origin: 'https://chat.example.org', 'Content-Type': 'application/json' }, body: '{}' });
    expect([ok.status, ok.headers['access-control-allow-origin']]).toEqual([200, 'https://chat.example.org']);
    const local = await send(configured.api, '/threads/search', { method: 'POST', headers: { Host: 'localhost', Origin: 'http://localhost:3000', 'Content-Type': 'application/json' }, body: '{}' });
    expect(local.status).toBe(403);
  });
});

describe("the worker's probes and /metrics (WORKER_PORT)", () => {
  const redis = useRedis();

  it('follow the API: without authentication only loopback and SERVICE_ALLOWED_HOSTS names', async () => {
    for (const [env, host, status] of [
      [{}, 'rebind.evil.example', 403],
      [{}, 'localhost:8421', 200],
      [{ SERVICE_ALLOWED_HOSTS: 'worker.internal' }, 'worker.internal', 200],
      [{ SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: 'k1' }, 'rebind.evil.example', 200],
    ] as const) {
      const api = await startTestApi({ redisUrl: redis.url, env: { ...env, WORKER_PORT: '0' } });
      try {
        const worker = createWorker(api.composition);
        const url = await worker.listen();
        expect((await send({ url }, '/health/live', { headers: { Host: host } })).status, `${JSON.stringify(env)} ${host}`).toBe(status);
        worker.server.closeAllConnections();
        await new Promise<void>((resolve) => worker.server.close(() => resolve()));
      } finally {
        await api.close();
      }
    }
  });
});
