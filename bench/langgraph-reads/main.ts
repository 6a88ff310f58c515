import { loadavg } from 'node:os';
import { benchCommand, choices, count, parseFlags, text, toggle } from '../harness/args.js';
import { load, type Endpoint, type LoadResult } from '../harness/autocannon.js';
import { closedLoop } from '../harness/client.js';
import { commandLine, describeMachine, generatedBlock, sourceRevision, writeBlock, type Machine, type SectionPlace } from '../harness/report.js';
import { inRoundOrder, medianBy } from '../harness/rounds.js';
import { runBench, type BenchProcesses } from '../harness/run.js';
import { cpuPer, cpuSnapshot, fixed } from '../harness/stats.js';
import { backendLabel } from '../langgraph/rounds.js';
import { BACKENDS, eachBackend, type LangGraphBackend, type Target } from '../langgraph/stack.js';

/**
 * `npm run bench:langgraph-reads`: the LangGraph Server API's reads beside the native reads of
 * the same sessions, embedded and on Redis, in the same processes and the same run (issue 34):
 * `POST /threads/search {limit: 50}` against `GET /api/sessions?limit=50` (the newest 50 of
 * --sessions threads), `GET /threads/{id}/state` against `GET /api/sessions/state` (rotating over
 * the threads with a run). autocannon, 50 connections; medians over passes; req/s, CPU per
 * request (API, workers, Redis) and the ratio against the goal of 1.5 ×.
 * Options: --sessions N (10000), --with-runs N (200, the newest, each with one `lg-echo` run),
 * --duration S (8), --warmup S (2), --passes N (3), --connections N (50),
 * --backends embedded,redis, --no-write, --limit-sec S (900), --profile DIR.
 */
const USAGE = `npm run bench:langgraph-reads -- [--sessions N] [--with-runs N] [--duration S] [--warmup S] [--passes N] [--connections N]
                                   [--backends embedded,redis] [--no-write] [--limit-sec S] [--profile DIR]`;
const FLAGS = {
  sessions: count(10_000),
  withRuns: count(200),
  duration: count(8),
  warmup: count(2),
  passes: count(3),
  connections: count(50),
  backends: choices(BACKENDS, BACKENDS),
  noWrite: toggle(),
  limitSec: count(900),
  profile: text(),
};
const argv = process.argv.slice(2);
const { flags: f, given } = parseFlags(argv, FLAGS, USAGE);
const o = {
  ...f,
  durationSec: f.duration,
  warmupSec: f.warmup,
  write: !f.noWrite && !given.has('profile'),
  workers: 1,
  concurrency: 8,
  /** `--profile DIR`: the API and worker processes run with `--cpu-prof` and write their profiles there (nothing written to BENCHMARKS.md). */
  profileDir: f.profile,
};
const command = benchCommand('bench:langgraph-reads', argv);
const SECTION: SectionPlace = { heading: '### LangGraph reads vs native reads', name: 'langgraph-reads' };

/** The goal of issue 34: each LangGraph read within this factor of its native twin (req/s). */
const GOAL = 1.5;

/** Owners of the seeded threads (metadata `owner`): 10,000 threads give each 50. */
const OWNERS = 200;

/** Native read, LangGraph read of the same thing. */
interface Pair {
  name: string;
  /** Whether the issue's goal applies (not to a read the issue did not name). @defaultValue true */
  goal?: boolean;
  native: Endpoint;
  langgraph: Endpoint;
}

function pairs(runThreads: string[]): Pair[] {
  const at = (n: number) => runThreads[n % runThreads.length]!;
  return [
    {
      name: 'list the newest 50',
      native: { name: 'GET /api/sessions?limit=50', method: 'GET', path: () => '/api/sessions?limit=50' },
      langgraph: { name: 'POST /threads/search {limit: 50}', method: 'POST', path: () => '/threads/search', body: () => '{"limit":50}' },
    },
    {
      // Each owner has SESSIONS / OWNERS threads, the oldest as old as the seeding: the metadata index reads them.
      name: 'the 50 threads of one owner',
      goal: false,
      native: { name: 'GET /api/sessions?limit=50', method: 'GET', path: () => '/api/sessions?limit=50' },
      langgraph: { name: 'POST /threads/search {metadata: {owner}, limit: 50}', method: 'POST', path: () => '/threads/search', body: (n) => `{"metadata":{"owner":"o${n % OWNERS}"},"limit":50}` },
    },
    {
      name: 'a thread\'s state',
      native: { name: 'GET /api/sessions/state', method: 'GET', path: (n) => `/api/sessions/state?session_id=${at(n)}` },
      langgraph: { name: 'GET /threads/{id}/state', method: 'GET', path: (n) => `/threads/${at(n)}/state` },
    },
  ];
}

async function post(url: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`POST ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** `count` calls of `one(i)`, `parallel` at a time. */
const inParallel = (count: number, parallel: number, one: (i: number) => Promise<void>) => closedLoop(parallel, count, o.limitSec * 1000, one);

/** The threads: `sessions - withRuns` empty ones with metadata, then `withRuns` (the newest) each with one echo run. */
async function seed(apiUrl: string): Promise<string[]> {
  const started = Date.now();
  await inParallel(o.sessions - o.withRuns, 16, async (i) => void (await post(`${apiUrl}/threads`, { metadata: { seeded: i, owner: `o${i % OWNERS}` } })));
  const runThreads: string[] = [];
  await inParallel(o.withRuns, 8, async (i) => {
    const thread = await post(`${apiUrl}/threads`, { metadata: { seeded: i, with_run: true } });
    const id = String(thread.thread_id);
    const values = await post(`${apiUrl}/threads/${id}/runs/wait`, { assistant_id: 'lg-echo', input: { message: `seed ${i}` } });
    if (values.echoed !== true) throw new Error(`seed run answered ${JSON.stringify(values).slice(0, 200)}`);
    runThreads.push(id);
  });
  console.log(`seeded ${o.sessions} threads (${o.withRuns} with a run) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return runThreads;
}

interface Measured extends LoadResult {
  /** CPU ms per request: API, workers, Redis. */
  cpu: { api: number; workers: number; redis: number };
  loadAvg: number;
}

async function measure(target: Target, endpoint: Endpoint): Promise<Measured> {
  await load(target.apiUrl, endpoint, o.connections, o.warmupSec);
  const loadAvg = loadavg()[0]!;
  const before = cpuSnapshot(target.groups);
  const result = await load(target.apiUrl, endpoint, o.connections, o.durationSec);
  const after = cpuSnapshot(target.groups);
  if (result.failures > 0) throw new Error(`${endpoint.name}: ${result.failures} of ${result.total} requests failed`);
  const { api, workers, redis } = cpuPer(before, after, result.total);
  return { ...result, cpu: { api, workers, redis }, loadAvg };
}

interface Cell {
  backend: LangGraphBackend;
  pair: string;
  side: 'native' | 'langgraph';
  pass: number;
  measured: Measured;
}

async function measureBackend(target: Target, cells: Cell[]): Promise<void> {
  const runThreads = await seed(target.apiUrl);
  for (let pass = 1; pass <= o.passes; pass += 1) {
    for (const pair of pairs(runThreads)) {
      // Alternate the order, so neither side always runs on a warmer or a fuller process.
      for (const side of inRoundOrder(pass, ['native', 'langgraph'] as const)) {
        const measured = await measure(target, pair[side]);
        cells.push({ backend: target.backend, pair: pair.name, side, pass, measured });
        console.log(`${target.backend} pass ${pass} ${pair[side].name}: ${measured.reqPerSec.toFixed(0)} req/s, p50 ${measured.p50Ms} ms, CPU ${fixed(measured.cpu.api, 2)} ms/request (API), load ${measured.loadAvg.toFixed(1)}`);
      }
    }
  }
}

function report(cells: Cell[]): { table: string; verdicts: string[] } {
  const lines = ['| backend | read | endpoint | req/s (median) | passes | p50 ms | CPU ms/request: api · workers · redis | load avg |', '|---|---|---|---:|---|---:|---|---|'];
  const verdicts: string[] = [];
  for (const backend of o.backends) {
    for (const pair of pairs(['x'])) {
      const of = (side: 'native' | 'langgraph') => cells.filter((c) => c.backend === backend && c.pair === pair.name && c.side === side);
      const sideMedian = (side: 'native' | 'langgraph') => {
        const all = of(side);
        const at = medianBy(all, (c) => c.measured.reqPerSec).measured;
        return { all, m: at.reqPerSec, at };
      };
      const native = sideMedian('native');
      const lg = sideMedian('langgraph');
      for (const [side, s] of [['native', native], ['langgraph', lg]] as const) {
        const x = s.at;
        lines.push(
          `| ${backendLabel(backend, o.workers)} | ${pair.name} | ${pair[side].name} | ${fixed(s.m, 0)} | ${s.all.map((c) => fixed(c.measured.reqPerSec, 0)).join(' · ')} | ${x.p50Ms} | ` +
            `${fixed(x.cpu.api, 2)} · ${fixed(x.cpu.workers, 2)} · ${fixed(x.cpu.redis, 2)} | ${s.all.map((c) => c.measured.loadAvg.toFixed(1)).join('–')} |`,
        );
      }
      const ratio = native.m / lg.m;
      verdicts.push(
        `- ${backendLabel(backend, o.workers)}, ${pair.name}: ${pair.native.name} ${fixed(native.m, 0)} req/s, ${pair.langgraph.name} ${fixed(lg.m, 0)} req/s: ` +
          `**${fixed(ratio, 2)} ×** (${pair.goal === false ? 'no goal' : `goal ≤ ${GOAL} ×: ${ratio <= GOAL ? 'met' : '**not met**'}`}); CPU ${fixed(native.at.cpu.api, 2)} against ${fixed(lg.at.cpu.api, 2)} ms a request (API).`,
      );
    }
  }
  return { table: lines.join('\n'), verdicts };
}

function section(cells: Cell[], m: Machine, source: string): string {
  const { table, verdicts } = report(cells);
  return generatedBlock(SECTION, [
    commandLine(command, source),
    '',
    `Machine: ${describeMachine(m)}; embedded: one API process without REDIS_URL; Redis: a private redis-server ${m.redis}, ` +
      'one API process and one worker, started as bench:langgraph starts them; the load generator (autocannon) shares the cores.',
    '',
    `Seeded through the API: ${o.sessions.toLocaleString('en-US')} threads (\`POST /threads\` with metadata), the newest ${o.withRuns} each with one run of \`lg-echo\` ` +
      '(`POST /threads/{id}/runs/wait`). Each endpoint: ' +
      `${o.warmupSec} s warm-up, then ${o.durationSec} s with ${o.connections} connections; native and LangGraph back to back (native first in odd passes); ` +
      `${o.passes} passes, medians. The lists answer the newest 50 threads (all with a run); the owner search answers the threads of one of ${OWNERS} owners (metadata \`owner\`, rotating; the threads without a run, ${Math.floor((o.sessions - o.withRuns) / OWNERS)} each, spread over the whole seeding), through the metadata index; the state reads rotate over the threads with a run. ` +
      'CPU per request from /proc of each process over the measured seconds.',
    '',
    table,
    '',
    `Goal: each LangGraph read within ${GOAL} × of its native twin (req/s).`,
    '',
    ...verdicts,
  ]);
}

async function main(processes: BenchProcesses): Promise<void> {
  const source = sourceRevision();
  const cells: Cell[] = [];
  console.log(`bench:langgraph-reads: ${o.backends.join(', ')}; ${o.sessions} threads; ${o.passes} passes of ${o.durationSec} s; ${source}`);
  const m = await eachBackend(processes, o.backends, o, (target) => measureBackend(target, cells));
  const text = section(cells, m, source);
  console.log(`\n${text}`);
  if (o.write) writeBlock(SECTION, text);
}

await runBench('bench:langgraph-reads', o.limitSec, main);
