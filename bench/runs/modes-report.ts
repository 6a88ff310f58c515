import { commandLine, describeMachine, generatedBlock, type Machine, type SectionPlace } from '../harness/report.js';
import { fixed, percentile } from '../harness/stats.js';
import type { ReviewMeasurement } from './review.js';
import type { WaitMeasurement } from './wait.js';

/** The block of a mode and set-up in BENCHMARKS.md: one section for the modes, a block for each. */
export function modeSection(mode: 'wait' | 'review', embedded: boolean): SectionPlace {
  return {
    heading: '## Runs: wait and review',
    name: `runs-${mode}${embedded ? '-embedded' : ''}`,
    writer: `npm run bench:runs -- --mode ${mode}${embedded ? ' --embedded' : ''}`,
  };
}

/** What the modes ran against, for the tables' context. */
export interface Setup {
  embedded: boolean;
  workers: number;
  concurrency: number;
  pollMs: number;
  runs: number;
  warmup: number;
}

const p = (sorted: number[], q: number, digits = 1) => fixed(percentile(sorted, q), digits);
const cpu = (c: { api: number; workers: number; redis: number }) =>
  [c.api, c.workers, c.redis].map((v) => (Number.isFinite(v) ? v.toFixed(2) : '—')).join(' · ');

export function waitFlowLabel(flow: WaitMeasurement['flow'], pollMs: number): string {
  if (flow === 'wait') return 'run and wait: POST /api/runs/wait';
  if (flow === 'poll') return `poll: POST /api/runs, GET /api/runs/{id} every ${pollMs} ms`;
  return 'light load of `## Runs`: POST /api/runs, end on Redis pub/sub';
}

export function waitTable(rows: WaitMeasurement[], pollMs: number): string {
  const lines = [
    '| flow | clients | runs/s | client p50 ms | client p99 ms | server p50 ms | server p99 ms | client p50 / server p50 | created_at → completed p50 ms | HTTP requests/run | CPU ms/run: api · workers · redis |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of rows) {
    const problems = [r.failed ? `${r.failed} failed` : '', r.missingEvents ? `${r.missingEvents} end events missing` : ''].filter(Boolean).join(', ');
    lines.push(
      `| ${waitFlowLabel(r.flow, pollMs)} | ${r.clients} | ${fixed(r.runsPerSec, 0)}${problems ? ` (${problems})` : ''} | ` +
        `${p(r.clientMs, 50)} | ${p(r.clientMs, 99)} | ${p(r.serverMs, 50)} | ${p(r.serverMs, 99)} | ` +
        `${fixed(percentile(r.clientMs, 50) / percentile(r.serverMs, 50), 2)} | ${p(r.createdToCompletedMs, 50, 0)} | ` +
        `${fixed(r.requestsPerRun, 1)} | ${cpu(r.cpuMsPerRun)} |`,
    );
  }
  return lines.join('\n');
}

/** One line per client count: run-and-wait against polling (and the light load). */
export function waitSummary(rows: WaitMeasurement[], pollMs: number): string {
  const counts = [...new Set(rows.map((r) => r.clients))];
  return counts
    .map((clients) => {
      const of = (flow: WaitMeasurement['flow']) => rows.find((r) => r.clients === clients && r.flow === flow);
      const [wait, poll, light] = [of('wait'), of('poll'), of('light')];
      const ratio = (r: WaitMeasurement) => fixed(percentile(r.clientMs, 50) / percentile(r.serverMs, 50), 2);
      const parts = [
        wait && `run and wait p50 ${p(wait.clientMs, 50)} ms, ${ratio(wait)} × its server-side p50 (${p(wait.serverMs, 50)} ms), ${fixed(wait.runsPerSec, 0)} runs/s`,
        poll &&
          `polling every ${pollMs} ms p50 ${p(poll.clientMs, 50)} ms (${ratio(poll)} ×), ${fixed(poll.runsPerSec, 0)} runs/s, ${fixed(poll.requestsPerRun, 1)} requests/run`,
        light && `light load p50 ${p(light.clientMs, 50)} ms (${ratio(light)} ×)`,
      ].filter(Boolean);
      return `- ${clients} client${clients > 1 ? 's' : ''}: ${parts.join('; ')}.`;
    })
    .join('\n');
}

export function reviewFlowLabel(flow: ReviewMeasurement['flow'], pollMs: number): string {
  return flow === 'wait'
    ? 'waiting: POST /api/runs/wait, POST /api/approval/respond with wait_ms'
    : `polling: POST /api/runs, poll every ${pollMs} ms, GET /api/approval/pending, respond, poll`;
}

const ROUTE_SHORT: Record<string, string> = {
  'POST /api/runs/wait': 'run+wait',
  'POST /api/approval/respond': 'respond',
  'POST /api/runs': 'start',
  'GET /api/runs/{id}': 'GET run',
  'GET /api/approval/pending': 'pending',
};

export function reviewTable(rows: ReviewMeasurement[], pollMs: number): string {
  const lines = [
    '| flow | clients | round trips/s | p50 ms | p99 ms | requests / round trip (min–max) | requests by route | CPU ms/round trip: api · workers · redis |',
    '|---|---:|---:|---:|---:|---:|---|---|',
  ];
  for (const r of rows) {
    const routes = r.requestsByRoute.map(([route, n]) => `${ROUTE_SHORT[route] ?? route} ${fixed(n, 1)}`).join(' · ');
    lines.push(
      `| ${reviewFlowLabel(r.flow, pollMs)} | ${r.clients} | ${fixed(r.roundTripsPerSec, 0)}${r.failed ? ` (${r.failed} failed)` : ''} | ` +
        `${p(r.latencyMs, 50)} | ${p(r.latencyMs, 99)} | ${fixed(r.requestsPerRoundTrip, 1)} (${r.minRequests}–${r.maxRequests}) | ${routes} | ${cpu(r.cpuMsPerRoundTrip)} |`,
    );
  }
  return lines.join('\n');
}

export function reviewSummary(rows: ReviewMeasurement[]): string {
  const counts = [...new Set(rows.map((r) => r.clients))];
  return counts
    .map((clients) => {
      const wait = rows.find((r) => r.clients === clients && r.flow === 'wait');
      const poll = rows.find((r) => r.clients === clients && r.flow === 'poll');
      if (!wait || !poll) return '';
      return (
        `- ${clients} client${clients > 1 ? 's' : ''}: ${fixed(wait.requestsPerRoundTrip, 1)} requests per round trip waiting against ` +
        `${fixed(poll.requestsPerRoundTrip, 1)} polling (${fixed(poll.requestsPerRoundTrip / wait.requestsPerRoundTrip, 1)} ×); ` +
        `${fixed(wait.roundTripsPerSec, 0)} against ${fixed(poll.roundTripsPerSec, 0)} round trips/s ` +
        `(${fixed(wait.roundTripsPerSec / poll.roundTripsPerSec, 2)} ×); p50 ${p(wait.latencyMs, 50)} against ${p(poll.latencyMs, 50)} ms.`
      );
    })
    .filter(Boolean)
    .join('\n');
}

function machineLine(m: Machine, s: Setup): string {
  const base = `Machine: ${describeMachine(m)}`;
  return s.embedded
    ? `${base}; embedded mode: one API process without REDIS_URL (in-memory adapters) executes the runs itself ` +
        `(WORKER_CONCURRENCY ${s.concurrency}) and shares these cores with the benchmark.`
    : `${base}, Redis ${m.redis}; the benchmark, redis-server, one API process and ${s.workers} worker process${s.workers > 1 ? 'es' : ''} ` +
        `(WORKER_CONCURRENCY ${s.concurrency}) all share these cores.`;
}

/** The first lines of a mode's block: the command, the machine. */
const head = (m: Machine, s: Setup, command: string, source: string) => [commandLine(command, source), '', machineLine(m, s), ''];

/** The generated block of `--mode wait`. */
export function waitSection(rows: WaitMeasurement[], m: Machine, s: Setup, command: string, source: string): string {
  return generatedBlock(modeSection('wait', s.embedded), [
    ...head(m, s, command, source),
    `One echo run (2 nodes) at a time per client, each client in a closed loop: ${s.warmup} warm-up runs, then ${s.runs} measured ` +
      'runs per flow and client count. *Client*: request sent → the answer that says the run completed (the 200 of ' +
      `POST /api/runs/wait; the GET /api/runs/{id} that first reads \`completed\`, polled every ${s.pollMs} ms after the 202` +
      (s.embedded ? ')' : '; for the light load, the `completed` event on the Redis channel as in `## Runs`)') +
      '. *Server*: the same request sent → the `ts` of the run\'s `completed` event, read ' +
      (s.embedded
        ? 'on one GET /api/events/stream held through the whole benchmark'
        : 'by the benchmark\'s own subscriber on the Redis events channel (so the API under test serves no extra stream)') +
      ' (same machine, same clock; `ts` is floored to the ms, so +0.5 ms); *created_at → completed*: ' +
      'both stamped by the server, whole ms (sub-ms server times are coarse). ' +
      '*client p50 / server p50*: what learning of the end adds on top of the run itself (1.00 = nothing). runs/s: completed ' +
      'runs over first request → last answer. SERVICE_SSE_MAX_PER_PRINCIPAL/TENANT are 0 (held waits count against them), ' +
      'SERVICE_RATE_LIMIT off.',
    '',
    waitTable(rows, s.pollMs),
    '',
    waitSummary(rows, s.pollMs),
  ]);
}

/** The generated block of `--mode review`. */
export function reviewSection(rows: ReviewMeasurement[], m: Machine, s: Setup, command: string, source: string): string {
  return generatedBlock(modeSection('review', s.embedded), [
    ...head(m, s, command, source),
    'One round trip of the `human-review` agent (draft → review asks for an approval → publish), answered at once ' +
      `(approved), per client in a closed loop: ${s.warmup} warm-up round trips, then ${s.runs} measured per flow and client ` +
      'count. *Waiting*: POST /api/runs/wait (answers `interrupted` with the approval), then POST /api/approval/respond ' +
      `with wait_ms (answers the run \`completed\`). *Polling*: POST /api/runs, GET /api/runs/{id} every ${s.pollMs} ms until ` +
      '`interrupted`, GET /api/approval/pending to find its request, POST /api/approval/respond, GET /api/runs/{id} every ' +
      `${s.pollMs} ms until \`completed\`. Requests are those actually made (mean per round trip, fewest–most); p50/p99: first ` +
      'request sent → the answer that says the run completed; round trips/s over first request → last answer.',
    '',
    reviewTable(rows, s.pollMs),
    '',
    reviewSummary(rows),
  ]);
}
