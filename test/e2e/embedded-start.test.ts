import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/app.js';
import { startProcess, type AgentProcess } from '../support/processes.js';

/**
 * `npm start` without REDIS_URL: the embedded default, one process on the in-memory adapters.
 * The entry is spawned as `npm start` runs it (src/main/api.ts), with REDIS_URL removed.
 */
describe('npm start without REDIS_URL (embedded mode)', () => {
  let proc: AgentProcess;

  beforeAll(async () => {
    proc = await startProcess({ entry: 'src/main/api.ts', env: { REDIS_URL: undefined, LOG_LEVEL: 'info' } });
  });
  afterAll(async () => {
    await proc?.stop();
  });

  it('logs that it listens in memory mode with the console URL', async () => {
    const line = await proc.waitForLine((l) => l.json?.msg === 'agentplane api listening');
    expect(line.json).toMatchObject({ mode: 'memory', url: proc.url, swagger: `${proc.url}/swagger/` });
  });

  it.each(['/healthz', '/health', '/health/live'])('%s is 200 {"status":"ok"}', async (path) => {
    const response = await call(`${proc.url}${path}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok' });
  });

  it('is ready on memory alone: no Redis is checked', async () => {
    const response = await call(`${proc.url}/health/ready`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ready', checks: { memory: 'ok' } });
  });

  it('serves the API with no sessions yet', async () => {
    const response = await call(`${proc.url}/api/sessions`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.body).toEqual({ sessions: [] });
  });

  it('serves the Swagger console, its document and the metrics', async () => {
    const page = await fetch(`${proc.url}/swagger/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('swagger-ui');

    const doc = await call(`${proc.url}/swagger/doc.json`);
    expect(doc.status).toBe(200);
    expect(doc.body).toMatchObject({ openapi: expect.stringMatching(/^3\./), paths: { '/api/sessions': { get: expect.any(Object) } } });

    const metrics = await fetch(`${proc.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(await metrics.text()).toContain('agentplane_http_requests_total');
  });

  it('exits 0 on SIGTERM after a graceful shutdown', async () => {
    proc.signal('SIGTERM');
    expect(await proc.exited).toBe(0);
    expect(proc.lines.some((l) => l.json?.msg === 'graceful shutdown complete')).toBe(true);
  });
});
