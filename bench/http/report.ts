import type { LoadResult } from '../harness/autocannon.js';
import { commandLine, describeMachine, generatedBlock, type Machine, type SectionPlace } from '../harness/report.js';

/** One pass over one endpoint: each process measured back to back. */
export interface Pass {
  api: LoadResult;
  bare: LoadResult;
  /** The bare process doing the store's Redis reads (GET endpoints only). */
  reads?: LoadResult;
  /** 1-minute load average when the pass started (the machine is shared). */
  loadAvg: number;
}

/** One endpoint: the reported pass and all of them. */
export interface Row extends Pass {
  endpoint: string;
  passes: Pass[];
}

/** Targets of issue 9: API req/s as a share of the bare handler's, by endpoint; p99 at 50 connections. */
export const RATIO_TARGETS: Readonly<Record<string, number>> = { 'GET /api/sessions': 0.5, 'GET /api/sessions/state': 0.7 };
export const P99_TARGET_MS = 25;

export const HTTP_SECTION: SectionPlace = { heading: '## HTTP', name: 'http' };
export const CLUSTER_SECTION: SectionPlace = { heading: '## Redis Cluster', name: 'redis-cluster-http', writer: 'npm run bench:http -- --redis-cluster' };

const fixed = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** Whether a row meets its targets, with the reasons it does not. */
export function misses(row: Row): string[] {
  const out: string[] = [];
  const ratio = row.api.reqPerSec / row.bare.reqPerSec;
  const target = RATIO_TARGETS[row.endpoint];
  if (target !== undefined && ratio < target) out.push(`${fixed(ratio * 100)} % of the bare handler (target ≥ ${fixed(target * 100)} %)`);
  if (row.api.p99Ms >= P99_TARGET_MS) out.push(`p99 ${row.api.p99Ms} ms (target < ${P99_TARGET_MS} ms)`);
  if (row.api.failures > 0) out.push(`${row.api.failures} non-2xx answers or errors`);
  return out;
}

const pct = (a: LoadResult, b: LoadResult) => `${fixed((a.reqPerSec / b.reqPerSec) * 100)} %`;

export function table(rows: Row[]): string {
  const lines = [
    '| endpoint | API req/s | p50 ms | p99 ms | bare Koa req/s | p50 ms | p99 ms | API / bare | bare + reads req/s | API / (bare + reads) | target | met | load avg |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|',
  ];
  for (const row of rows) {
    const target = RATIO_TARGETS[row.endpoint];
    const missed = misses(row);
    lines.push(
      `| ${row.endpoint} | ${fixed(row.api.reqPerSec)} | ${row.api.p50Ms} | ${row.api.p99Ms} | ${fixed(row.bare.reqPerSec)} | ${row.bare.p50Ms} | ${row.bare.p99Ms} | ` +
        `${pct(row.api, row.bare)} | ${row.reads ? fixed(row.reads.reqPerSec) : 'n/a'} | ${row.reads ? pct(row.api, row.reads) : 'n/a'} | ` +
        `${target !== undefined ? `≥ ${fixed(target * 100)} %, ` : ''}p99 < ${P99_TARGET_MS} ms | ` +
        `${missed.length === 0 ? 'yes' : `**no**: ${missed.join('; ')}`} | ${fixed(row.loadAvg, 1)} |`,
    );
  }
  return lines.join('\n');
}

/** Every pass of every endpoint, as one line per endpoint. */
function allPasses(rows: Row[]): string {
  const one = (p: Pass) => `${fixed(p.api.reqPerSec)} / ${fixed(p.bare.reqPerSec)} (${pct(p.api, p.bare)})${p.reads ? ` / ${fixed(p.reads.reqPerSec)}` : ''}`;
  return `All passes, API / bare req/s (ratio) / bare + reads req/s: ${rows.map((r) => `${r.endpoint}: ${r.passes.map(one).join(', ')}`).join('; ')}.`;
}

/** The generated part of the `## HTTP` section. */
export function generated(rows: Row[], m: Machine, command: string, source: string, setup: string): string {
  return generatedBlock(HTTP_SECTION, [
    commandLine(command, source),
    '',
    `Machine: ${describeMachine(m)}, Redis ${m.redis}; autocannon (in the benchmark ` +
      'process), redis-server, the API process and the bare Koa process share these cores, with other users of the machine ' +
      '(load avg column).',
    '',
    setup,
    '',
    table(rows),
    ...(rows.some((r) => r.passes.length > 1) ? ['', allPasses(rows)] : []),
  ]);
}

/** The generated HTTP part of the `## Redis Cluster` section: the API's answers on each Redis, side by side. */
export function clusterSection(
  results: { name: string; rows: { endpoint: string; api: LoadResult; loadAvg: number }[] }[],
  m: Machine,
  command: string,
  source: string,
  setup: string,
): string {
  const lines = [
    `| endpoint | ${results.map((r) => `${r.name}: req/s | p50 ms | p99 ms | load avg`).join(' | ')} | cluster / one server |`,
    `|---|${results.map(() => '---:|---:|---:|---:|').join('')}---:|`,
  ];
  for (const [i, { endpoint }] of (results[0]?.rows ?? []).entries()) {
    const cells = results.map((r) => r.rows[i]!).map((row) => `${fixed(row.api.reqPerSec)} | ${row.api.p50Ms} | ${row.api.p99Ms} | ${fixed(row.loadAvg, 1)}`);
    const [one, cluster] = results.map((r) => r.rows[i]!.api);
    lines.push(`| ${endpoint} | ${cells.join(' | ')} | ${one && cluster ? pct(cluster, one) : 'n/a'} |`);
  }
  return generatedBlock(CLUSTER_SECTION, [
    commandLine(command, source),
    '',
    `Machine: ${describeMachine(m)}, Redis ${m.redis}; autocannon, the Redis processes ` +
      '(one, or six) and the API process share these cores, with other users of the machine (load avg column).',
    '',
    setup,
    '',
    lines.join('\n'),
  ]);
}
