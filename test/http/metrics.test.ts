import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { parsePrometheus, type MetricFamily } from '../support/http.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/** Metric names of CONTRACT.md besides the two HTTP ones. */
const CONTRACT_METRICS = [
  'agentplane_sse_connections',
  'agentplane_events_published_total',
  'agentplane_runs_total',
  'agentplane_approvals_pending',
  'agentplane_schedule_fires_total',
  'agentplane_rate_limited_total',
];

/** Requests whose raw paths and queries carry ids that must never become label values. */
const TRAFFIC: { method: string; path: string; status: number }[] = [
  { method: 'GET', path: '/api/sessions', status: 200 },
  { method: 'GET', path: '/api/sessions?agent_id=agent-7f3e&limit=5', status: 200 },
  { method: 'GET', path: '/api/sessions/state?session_id=abc-4711', status: 404 },
  { method: 'GET', path: '/api/sessions/history?session_id=abc-4711', status: 404 },
  { method: 'GET', path: '/api/traces?session_id=abc-4711', status: 404 },
  { method: 'GET', path: '/api/traces', status: 400 },
  { method: 'GET', path: '/api/nope/123', status: 404 },
  { method: 'PUT', path: '/api/sessions', status: 405 },
  { method: 'GET', path: '/swagger/doc.json', status: 200 },
  { method: 'GET', path: '/healthz', status: 200 },
];

const RAW_FRAGMENTS = ['abc-4711', 'agent-7f3e', '123', '?', 'doc.json'];

describe('/metrics', () => {
  let redis: TestRedis;
  let api: TestApi;
  let families: Map<string, MetricFamily>;
  let contentType: string | null;

  beforeAll(async () => {
    redis = await startRedis();
    api = await startTestApi({ redisUrl: redis.url });
    for (const request of TRAFFIC) {
      const response = await call(`${api.url}${request.path}`, { method: request.method });
      expect(response.status, `${request.method} ${request.path}`).toBe(request.status);
    }
    const response = await fetch(`${api.url}/metrics`);
    expect(response.status).toBe(200);
    contentType = response.headers.get('content-type');
    families = parsePrometheus(await response.text());
  });
  afterAll(async () => {
    await api?.close();
    await redis?.stop();
  });

  const family = (name: string): MetricFamily => {
    const found = families.get(name);
    if (!found) throw new Error(`metric ${name} missing; have ${[...families.keys()].join(', ')}`);
    return found;
  };

  it('is the Prometheus text exposition 0.0.4', () => {
    expect(contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(families.size).toBeGreaterThan(CONTRACT_METRICS.length + 2);
    for (const [name, metric] of families) {
      expect(metric.type, name).not.toBe('UNTYPED');
      expect(metric.help, name).not.toBe('');
    }
    // prom-client's default process metrics are part of the contract too.
    expect(families.has('process_cpu_user_seconds_total')).toBe(true);
    expect(families.has('nodejs_eventloop_lag_seconds')).toBe(true);
  });

  it('counts requests by method, route pattern and status', () => {
    const requests = family('agentplane_http_requests_total');
    expect(requests.type).toBe('COUNTER');
    for (const sample of requests.metrics) expect(Object.keys(sample.labels ?? {}).sort()).toEqual(['method', 'route', 'status']);
    const count = (labels: Record<string, string>) =>
      requests.metrics
        .filter((s) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === v))
        .reduce((sum, s) => sum + Number(s.value), 0);
    expect(count({ method: 'GET', route: '/api/sessions', status: '200' })).toBe(2);
    expect(count({ method: 'GET', route: '/api/sessions/state', status: '404' })).toBe(1);
    expect(count({ method: 'GET', route: '/api/traces', status: '404' })).toBe(1);
    expect(count({ method: 'GET', route: '/api/traces', status: '400' })).toBe(1);
    expect(count({ method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    // A 405 is a request of a known path: labelled with its pattern (review finding 10).
    expect(count({ method: 'PUT', route: '/api/sessions', status: '405' })).toBe(1);
    expect(count({ method: 'GET', route: '/swagger', status: '200' })).toBe(1);
  });

  it('times requests by method and route pattern in a histogram', () => {
    const duration = family('agentplane_http_request_duration_seconds');
    expect(duration.type).toBe('HISTOGRAM');
    for (const sample of duration.metrics) {
      expect(Object.keys(sample.labels ?? {}).sort()).toEqual(['method', 'route']);
      expect(sample.buckets?.['+Inf']).toBe(sample.count);
    }
    const sessions = duration.metrics.find((s) => s.labels?.method === 'GET' && s.labels.route === '/api/sessions');
    expect(Number(sessions?.count)).toBe(2);
  });

  it('labels routes with declared patterns only, never a raw path, id or query', () => {
    const allowed = new Set([...api.api.routes.map((r) => r.path), 'unmatched', '/swagger']);
    const routes = ['agentplane_http_requests_total', 'agentplane_http_request_duration_seconds'].flatMap((name) =>
      family(name).metrics.map((s) => s.labels?.route ?? '<none>'),
    );
    expect(routes.length).toBeGreaterThan(0);
    for (const route of routes) {
      expect(allowed, route).toContain(route);
      for (const fragment of RAW_FRAGMENTS) expect(route, route).not.toContain(fragment);
    }
  });

  it('exposes the other metrics of the contract', () => {
    for (const name of CONTRACT_METRICS) family(name);
    expect(family('agentplane_sse_connections').metrics).toEqual([{ value: '0' }]);
    expect(family('agentplane_approvals_pending').metrics).toEqual([{ value: '0' }]);
    expect(family('agentplane_events_published_total').type).toBe('COUNTER');
    expect(family('agentplane_runs_total').type).toBe('COUNTER');
    expect(family('agentplane_schedule_fires_total').type).toBe('COUNTER');
    expect(family('agentplane_rate_limited_total').type).toBe('COUNTER');
  });

  it('samples the storage: Redis memory used, sessions and keys held', async () => {
    const memory = Number(family('agentplane_storage_memory_bytes').metrics[0]!.value);
    expect(memory).toBeGreaterThan(100_000);
    const items = (found: Map<string, MetricFamily>) =>
      new Map(found.get('agentplane_storage_items')!.metrics.map((m) => [m.labels?.kind, Number(m.value)]));
    const before = items(families);
    expect(before.get('keys')).toBeGreaterThan(0);
    // Two sessions and a schedule more: the next scrape (after the 1 s sample) counts them.
    for (let i = 0; i < 2; i += 1) expect((await call(`${api.url}/api/runs`, { method: 'POST', json: { agent_id: 'echo' } })).status).toBe(202);
    expect((await call(`${api.url}/api/schedules`, { method: 'POST', json: { agent_id: 'echo', cron_expr: '0 0 1 1 *' } })).status).toBe(201);
    await waitFor('the storage gauges to count them', async () => {
      const after = items(parsePrometheus(await (await fetch(`${api.url}/metrics`)).text()));
      return after.get('sessions') === before.get('sessions')! + 2 && after.get('schedules') === before.get('schedules')! + 1;
    });
    expect(family('agentplane_sessions_expired_total').type).toBe('COUNTER');
  });
});
