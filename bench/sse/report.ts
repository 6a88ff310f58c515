import { describeMachine, generatedBlock, type Machine, type SectionPlace } from '../harness/report.js';
import { percentile } from '../harness/stats.js';

/** One measured number of idle clients. */
export interface SseMeasurement {
  clients: number;
  /** Clients whose latencies were recorded. */
  timed: number;
  events: number;
  /** Pause between two publishes, ms. */
  intervalMs: number;
  /** Latencies of every (timed client, event) pair, sorted, ms. */
  latenciesMs: number[];
  /** (client, event) pairs never received. */
  missing: number;
  /** Connections the server dropped during the measurement. */
  dropped: number;
  /** API process RSS before the clients connected and with them idle, bytes. */
  rssBefore: number;
  rssWith: number;
  /** API process CPU time spent delivering the events, ms. */
  deliveryCpuMs: number;
  /** 1-minute load average when the events were published (other users of the machine). */
  loadAvg: number;
}

/** Live heap (after full collections) and RSS per idle connection of one server variant. */
export interface FloorMeasurement {
  variant: 'pipe' | 'node' | 'koa' | 'agentplane';
  clients: number;
  heapKiB: number;
  rssKiB: number;
}

const FLOOR_VARIANTS: Record<FloorMeasurement['variant'], string> = {
  pipe: 'node:http, PassThrough body with pass.pipe(res)',
  node: 'node:http, PassThrough body through stream.pipeline (what Koa does with a stream body)',
  koa: 'Koa, one middleware setting a PassThrough body',
  agentplane: 'agentplane API app (memory backend), GET /api/events/stream',
};

export function floorTable(rows: FloorMeasurement[]): string {
  return [
    '| server (same idle clients) | live heap per connection | RSS per connection |',
    '|---|---:|---:|',
    ...rows.map((r) => `| ${FLOOR_VARIANTS[r.variant]} | ${r.heapKiB.toFixed(1)} KiB | ${r.rssKiB.toFixed(1)} KiB |`),
  ].join('\n');
}

export const TARGET = { clients: 10_000, p99Ms: 200, rssPerConnectionKiB: 20 };

export const SSE_SECTION: SectionPlace = { heading: '## SSE', name: 'sse' };

const kib = (bytes: number) => bytes / 1024;
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

export function table(rows: SseMeasurement[]): string {
  const lines = [
    '| idle clients (timed) | events/s | events | delivered | p50 ms | p99 ms | max ms | API RSS before → with clients | RSS per idle connection | API CPU per delivery | load avg |',
    '|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|',
  ];
  for (const m of rows) {
    const l = m.latenciesMs;
    lines.push(
      `| ${m.clients.toLocaleString('en')} (${m.timed}) | ${(1000 / m.intervalMs).toFixed(0)} | ${m.events} | ${(m.clients * m.events - m.missing).toLocaleString('en')}${m.missing ? ` (${m.missing} missing)` : ''}${m.dropped ? `, ${m.dropped} dropped` : ''} | ` +
        `${percentile(l, 50).toFixed(1)} | ${percentile(l, 99).toFixed(1)} | ${(l[l.length - 1] ?? NaN).toFixed(1)} | ` +
        `${mib(m.rssBefore)} → ${mib(m.rssWith)} MiB | ${kib((m.rssWith - m.rssBefore) / m.clients).toFixed(1)} KiB | ${((m.deliveryCpuMs * 1000) / (m.clients * m.events)).toFixed(1)} µs | ${m.loadAvg.toFixed(1)} |`,
    );
  }
  return lines.join('\n');
}

export function verdict(rows: SseMeasurement[]): string {
  const top = rows.filter((r) => r.clients === TARGET.clients);
  if (top.length === 0) return `Target (${TARGET.clients.toLocaleString('en')} clients) not measured in this run.`;
  const ok = (pass: boolean) => (pass ? 'met' : 'NOT met');
  const latency = top.map((r) => {
    const p99 = percentile(r.latenciesMs, 99);
    return `${ok(p99 < TARGET.p99Ms && r.missing === 0)} at ${(1000 / r.intervalMs).toFixed(0)} events/s (${p99.toFixed(1)} ms)`;
  });
  const perConnection = kib((top[0]!.rssWith - top[0]!.rssBefore) / top[0]!.clients);
  return (
    `Target at ${TARGET.clients.toLocaleString('en')} clients: p99 < ${TARGET.p99Ms} ms — ${latency.join(', ')}; ` +
    `under ${TARGET.rssPerConnectionKiB} KiB RSS per idle connection — ${ok(perConnection < TARGET.rssPerConnectionKiB)} (${perConnection.toFixed(1)} KiB).`
  );
}

export function section(command: string, host: Machine, revision: string, rows: SseMeasurement[], floors: FloorMeasurement[], notes: string[]): string {
  return generatedBlock(SSE_SECTION, [
    `Command: \`${command}\``,
    '',
    `Machine: ${describeMachine(host)}, ${host.redis}; ${revision}; ${new Date().toISOString().slice(0, 10)}.`,
    '',
    table(rows),
    '',
    verdict(rows),
    '',
    ...(floors.length > 0
      ? [`Memory floor: ${floors[0]!.clients.toLocaleString('en')} idle connections held by each server in turn (\`bench/sse/floor.ts\`, node --expose-gc, after full collections).`, '', floorTable(floors), '']
      : []),
    ...notes.map((note) => `- ${note}`),
  ]);
}
