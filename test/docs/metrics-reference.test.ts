import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { parsePrometheus, type MetricFamily } from '../support/http.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { docPages, ROOT } from './doc-pages.js';

/*
 * docs/reference/metrics.md is the one list of agentplane's metrics. A process on Redis exports
 * every one of them (embedded leaves agentplane_storage_memory_bytes out, as the page says), so
 * its `/metrics` is held to the page's table in both directions: each family it exports is a
 * row with the same type, each row is exported, and the labels of every sample are the row's.
 * Any other page that names a metric must name one of the table's.
 */

const PAGE = 'docs/reference/metrics.md';
/** The families prom-client adds (the page names them by prefix). */
const DEFAULT_PREFIXES = ['process_', 'nodejs_'];
/** Labels Prometheus adds to the series of a histogram or summary. */
const SERIES_LABELS = new Set(['le', 'quantile']);

interface Row {
  type: string;
  labels: string[];
}

/** The table's rows: `| `name` | type | `label`, `label` | what |`. */
function documented(): Map<string, Row> {
  const text = readFileSync(join(ROOT, PAGE), 'utf8');
  const rows = [...text.matchAll(/^\| `(agentplane_[a-z_]+)` \| (\w+) \|([^|]*)\|/gm)];
  return new Map(rows.map((row) => [row[1]!, { type: row[2]!, labels: [...row[3]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!).sort() }]));
}

/** `file:line: name` of each metric name a page mentions (README.md, CONTRIBUTING.md, docs/). */
function mentions(): { where: string; name: string }[] {
  return docPages().flatMap((file) =>
    readFileSync(join(ROOT, file), 'utf8')
      .split('\n')
      .flatMap((line, index) => [...line.matchAll(/\bagentplane_[a-z_]+/g)].map((m) => ({ where: `${file}:${index + 1}`, name: m[0] }))),
  );
}

describe('the metrics reference', () => {
  const rows = documented();
  let redis: TestRedis;
  let api: TestApi;
  let families: Map<string, MetricFamily>;

  beforeAll(async () => {
    redis = await startRedis();
    // A capped agent gives the per-agent gauges (left out without one) samples to compare.
    api = await startTestApi({ redisUrl: redis.url, env: { SERVICE_AGENT_MAX_RUNNING: 'echo:4' } });
    api.composition.startExecuting();
    // A run that ends gives the labelled counters (requests, runs, events) samples to compare.
    const run = await call(`${api.url}/api/runs/wait`, { method: 'POST', json: { agent_id: 'echo', input: { text: 'hi' } } });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    families = parsePrometheus(await (await fetch(`${api.url}/metrics`)).text());
  });
  afterAll(async () => {
    await api?.close();
    await redis?.stop();
  });

  it('reads a table of metrics from the page', () => {
    expect(rows.size).toBeGreaterThan(10);
    expect(rows.get('agentplane_http_requests_total')).toEqual({ type: 'counter', labels: ['method', 'route', 'status'] });
  });

  it('documents every metric a process exports, with its type', () => {
    const ours = [...families.values()].filter((family) => !DEFAULT_PREFIXES.some((prefix) => family.name.startsWith(prefix)));
    expect(ours.filter((family) => !family.name.startsWith('agentplane_')).map((family) => family.name)).toEqual([]);
    expect(ours.filter((family) => !rows.has(family.name)).map((family) => family.name), `exported, not in ${PAGE}`).toEqual([]);
    for (const family of ours) expect(rows.get(family.name)?.type, family.name).toBe(family.type.toLowerCase());
  });

  it('lists only metrics a process exports', () => {
    expect([...rows.keys()].filter((name) => !families.has(name)), `in ${PAGE}, not exported`).toEqual([]);
  });

  it('gives each metric the labels its samples carry', () => {
    const sampled = [...families.values()].filter((family) => rows.has(family.name) && family.metrics.length > 0);
    expect(sampled.map((family) => family.name)).toEqual(
      expect.arrayContaining([
        'agentplane_http_requests_total',
        'agentplane_runs_total',
        'agentplane_events_published_total',
        'agentplane_storage_items',
        'agentplane_agent_runs_max',
      ]),
    );
    for (const family of sampled) {
      for (const sample of family.metrics) {
        const labels = Object.keys(sample.labels ?? {}).filter((label) => !SERIES_LABELS.has(label)).sort();
        expect(labels, `${family.name} ${JSON.stringify(sample.labels)}`).toEqual(rows.get(family.name)!.labels);
      }
    }
  });

  it('has every other page name only metrics of the table', () => {
    const series = (name: string) => name.replace(/_(bucket|sum|count)$/, '');
    const unknown = mentions().filter(({ name }) => !rows.has(name) && !rows.has(series(name)));
    expect(unknown.map(({ where, name }) => `${where}: ${name}`)).toEqual([]);
  });
});
