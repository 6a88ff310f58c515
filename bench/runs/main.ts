import { mkdtempSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { isCluster, type RedisClient } from '../../src/adapters/redis/connection.js';
import { RedisKeys } from '../../src/adapters/redis/keys.js';
import { benchCommand } from '../harness/args.js';
import type { BenchChild } from '../harness/processes.js';
import { clientAddresses, commandLines, countCommands, monotonicUs, profilesIn, summarizeProfile } from '../harness/profile.js';
import { redisVersion, type BenchRedis } from '../harness/redis.js';
import { describeMachine, machine, sourceRevision, writeBlock, type Machine } from '../harness/report.js';
import { medianBy } from '../harness/rounds.js';
import { runBench, STACK_ENV, type BenchProcesses } from '../harness/run.js';
import { callsPerRun, commandCalls, cpuPer, cpuSnapshot, type ProcessGroups } from '../harness/stats.js';
import { lightTable, measureLight } from './light.js';
import { fireBatch, RunEndWatcher, type BatchResult } from './load.js';
import { modeSection, reviewSection, reviewSummary, reviewTable, waitSection, waitSummary, waitTable, type Setup } from './modes-report.js';
import { parseOptions, type BenchOptions } from './options.js';
import { CLUSTER_SECTION, clusterSection, commandsLine, generated, RUNS_SECTION, table, verdict, type Measurement } from './report.js';
import { measureReviewFlow, type ReviewFlow, type ReviewMeasurement } from './review.js';
import { ChannelRunStops, RunEventStream, type RunStops } from './run-events.js';
import { measureWaitFlow, type WaitFlow, type WaitMeasurement } from './wait.js';

/**
 * `npm run bench:runs`: echo runs per second end to end, and latency from POST /api/runs to the
 * run's `completed` event, with 1 and 2 worker processes, on a private redis-server and one API
 * process it starts and stops itself. See BENCHMARKS.md, section Runs. `--redis-cluster`: the
 * same on a redis-server and then on a Redis Cluster of six, in one run (section Redis Cluster).
 *
 * `--mode wait`: one echo run through POST /api/runs/wait against polling GET /api/runs/{id}
 * (and, on Redis, the light load), client-observed and server-side. `--mode review`: the
 * human-review round trip with the waiting routes against the polling flow. Both on Redis
 * (API + workers) or, with `--embedded`, one API process without REDIS_URL. See BENCHMARKS.md,
 * section "Runs: wait and review".
 */
const PREFIX = STACK_ENV.SERVICE_KEY_PREFIX;
const argv = process.argv.slice(2);
const options = parseOptions(argv);
const command = benchCommand('bench:runs', argv);
const profileDir = options.profile ? mkdtempSync(join(tmpdir(), 'agentplane-bench-runs-')) : undefined;
const nodeArgs = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
/** Monotonic µs spans of the measured batches: CPU profiles are summarised over these only. */
const windows: [number, number][] = [];

/** One configuration's measured batch, on `api` with `workerCount` workers started for it (and stopped after). */
async function measure(processes: BenchProcesses, redis: BenchRedis, api: BenchChild, watcher: RunEndWatcher, admin: RedisClient, workerCount: number, concurrency: number, pass: number, onLastPass: (() => Promise<void>) | undefined): Promise<Measurement> {
  const workers = await processes.workers(
    workerCount,
    { ...redis.env, ...STACK_ENV, WORKER_CONCURRENCY: String(concurrency) },
    nodeArgs,
    (i, n) => `worker ${i + 1}/${n} (concurrency ${concurrency}, pass ${pass})`,
  );
  const batch = (runs: number): Promise<BatchResult> =>
    fireBatch({ apiUrl: api.url, runs, clients: options.clients, watcher, timeoutMs: Math.max(60_000, runs * 20) });
  try {
    await batch(options.warmup);
    const groups: Required<ProcessGroups> = { api: [api.pid], workers: workers.map((w) => w.pid), redis: redis.pids(), bench: [process.pid] };
    const loadAvg = loadavg()[0]!;
    const cpuBefore = cpuSnapshot(groups);
    const callsBefore = await commandCalls(admin);
    const from = monotonicUs();
    const result = await batch(options.runs);
    windows.push([from, monotonicUs()]);
    const cpuAfter = cpuSnapshot(groups);
    const callsAfter = await commandCalls(admin);
    const usedMs = Object.values(cpuPer(cpuBefore, cpuAfter, 1)).reduce((sum, ms) => sum + ms, 0);
    const lightContext = { apiUrl: api.url, watcher, admin, groups, workers: workerCount, concurrency };
    const light = [];
    for (const clients of options.lightClients) light.push(await measureLight(lightContext, clients, options.lightRuns));
    await onLastPass?.();
    return {
      workers: workerCount,
      concurrency,
      batch: result,
      light,
      cpuMsPerRun: cpuPer(cpuBefore, cpuAfter, result.runs),
      callsPerRun: callsPerRun(callsBefore, callsAfter, result.runs),
      passes: [],
      loadAvg,
      cpuShare: usedMs / (result.elapsedMs * cpus().length),
    };
  } finally {
    const codes = await Promise.all(workers.map((w) => w.stop()));
    if (codes.some((code) => code !== 0)) console.error(`worker exit codes: ${codes.join(', ')}`);
  }
}

/** With --profile: the commands one run costs, per process role, over a small batch under MONITOR. */
function commandCounter(redisUrl: string, api: BenchChild, watcher: RunEndWatcher, before: Map<string, string>) {
  return async () => {
    const roleOf = (source: string) => {
      if (source === 'lua') return 'inside Lua scripts';
      const name = before.get(source);
      if (name === undefined) return 'worker';
      return name.startsWith('bench') ? 'bench' : 'api';
    };
    const { runs, perRole } = await countCommands(redisUrl, roleOf, async () => {
      const result = await fireBatch({ apiUrl: api.url, runs: 200, clients: 8, watcher, timeoutMs: 60_000 });
      return result.runs;
    });
    console.log(`\nRedis commands per run (MONITOR over ${runs} runs):\n${commandLines(runs, perRole).join('\n')}`);
  };
}

/** The median pass of a configuration (by runs/s), with every pass's runs/s. */
function median(passes: Measurement[]): Measurement {
  return { ...medianBy(passes, (p) => p.batch.runsPerSec), passes: passes.map((p) => p.batch.runsPerSec) };
}

/** `--mode wait` and `--mode review`: one set-up, every flow with every client count. */
async function mainMode(processes: BenchProcesses, o: BenchOptions): Promise<void> {
  const embedded = o.embedded;
  const setup: Setup = { embedded, workers: embedded ? 0 : o.workers[0]!, concurrency: o.concurrency[0]!, pollMs: o.pollMs, runs: o.runs, warmup: o.warmup };
  const concurrency = { WORKER_CONCURRENCY: String(setup.concurrency) };
  const redis = embedded ? undefined : await processes.redis();
  const stack = await processes.stack({
    redis,
    env: { ...STACK_ENV, ...(embedded ? concurrency : {}) },
    // Held waits and the event stream count against the per-caller stream caps (20 by default).
    apiEnv: { SERVICE_RATE_LIMIT: 'off', SERVICE_SSE_MAX_PER_PRINCIPAL: '0', SERVICE_SSE_MAX_PER_TENANT: '0' },
    workers: setup.workers,
    workerEnv: concurrency,
    workerName: (i, n) => `worker ${i + 1}/${n} (concurrency ${setup.concurrency})`,
  });
  const { api, groups } = stack;
  let events: RunStops | undefined;
  const m = machine(redis ? await redisVersion(redis.client('bench:version')) : 'n/a');
  const source = sourceRevision();
  const where = embedded ? `embedded (one API process, concurrency ${setup.concurrency})` : `Redis ${m.redis}, ${setup.workers} workers × ${setup.concurrency}`;
  console.log(
    `bench:runs --mode ${o.mode} on ${describeMachine(m)}, ${where}; ${source}; ` +
      `${o.runs} measured after ${o.warmup} warm-up per flow and client count; clients ${o.clientCounts.join(', ')}; polls every ${o.pollMs} ms`,
  );
  try {
    if (o.mode === 'wait') {
      let watcher: RunEndWatcher | undefined;
      if (redis) {
        // The benchmark's own subscriber: run ends for the light load and the server-side times.
        const subscriber = redis.client('bench:subscriber');
        watcher = new RunEndWatcher(subscriber, `${PREFIX}:events`);
        events = new ChannelRunStops(subscriber, `${PREFIX}:events`);
        await watcher.start();
      } else events = await RunEventStream.open(api.url);
      const stops = events;
      const flows: WaitFlow[] = ['wait', 'poll', ...(watcher ? (['light'] as const) : [])];
      const rows: WaitMeasurement[] = [];
      for (const clients of o.clientCounts) {
        for (const flow of flows) {
          const row = await measureWaitFlow({ apiUrl: api.url, events: stops, watcher, groups, pollMs: o.pollMs }, flow, clients, o.warmup, o.runs);
          console.log(waitTable([row], o.pollMs).split('\n').slice(rows.length === 0 ? 0 : 2).join('\n'));
          rows.push(row);
        }
      }
      console.log(`\n${waitTable(rows, o.pollMs)}\n\n${waitSummary(rows, o.pollMs)}`);
      if (o.write) writeBlock(modeSection('wait', embedded), waitSection(rows, m, setup, command, source));
    } else {
      const flows: ReviewFlow[] = ['wait', 'poll'];
      const rows: ReviewMeasurement[] = [];
      for (const clients of o.clientCounts) {
        for (const flow of flows) {
          const row = await measureReviewFlow({ apiUrl: api.url, groups, pollMs: o.pollMs }, flow, clients, o.warmup, o.runs);
          console.log(reviewTable([row], o.pollMs).split('\n').slice(rows.length === 0 ? 0 : 2).join('\n'));
          rows.push(row);
        }
      }
      console.log(`\n${reviewTable(rows, o.pollMs)}\n\n${reviewSummary(rows)}`);
      if (o.write) writeBlock(modeSection('review', embedded), reviewSection(rows, m, setup, command, source));
    }
  } finally {
    events?.close();
  }
}

/** Every configuration on one Redis (the API started and stopped here): the median pass of each. */
async function measureOn(processes: BenchProcesses, redis: BenchRedis, o: BenchOptions): Promise<Measurement[]> {
  const admin = redis.client('bench:admin');
  const { api, stop } = await processes.stack({ redis, env: STACK_ENV, apiEnv: { SERVICE_RATE_LIMIT: 'off' }, workers: 0, nodeArgs });
  try {
    // On a cluster the run events of DefaultTenant are announced on its sharded channel.
    const channel = isCluster(admin) ? new RedisKeys(PREFIX).eventsShardChannel('DefaultTenant') : `${PREFIX}:events`;
    const watcher = new RunEndWatcher(redis.client('bench:subscriber', { shardedSubscriber: true }), channel);
    await watcher.start();
    const apiClients = o.profile && !isCluster(admin) ? await clientAddresses(admin as Redis) : new Map<string, string>();
    const passes = new Map<string, Measurement[]>();
    const configs = o.concurrency.flatMap((c) => o.workers.map((w) => [w, c] as const));
    for (let pass = 1; pass <= o.repeats; pass += 1) {
      for (const [i, [w, c]] of configs.entries()) {
        const last = o.profile && pass === o.repeats && i === configs.length - 1;
        const row = await measure(processes, redis, api, watcher, admin, w, c, pass, last ? commandCounter(redis.env.REDIS_URL!, api, watcher, apiClients) : undefined);
        console.log(table([row]).split('\n').slice(pass === 1 && i === 0 ? 0 : 2).join('\n'));
        passes.set(`${w}:${c}`, [...(passes.get(`${w}:${c}`) ?? []), row]);
      }
    }
    return [...passes.values()].map(median);
  } finally {
    await stop();
  }
}

/** The throughput tables: on a redis-server (and, `--redis-cluster`, then on a Redis Cluster). */
async function main(processes: BenchProcesses, o: BenchOptions): Promise<void> {
  const results: { name: string; rows: Measurement[] }[] = [];
  let m: Machine | undefined;
  const source = sourceRevision();
  for (const cluster of o.redisCluster ? [false, true] : [false]) {
    const redis = await processes.redis(cluster);
    if (!m) {
      m = machine(await redisVersion(redis.client('bench:version')));
      console.log(`bench:runs on ${describeMachine(m)}, Redis ${m.redis}; ${source}; ${o.runs} runs after ${o.warmup} warm-up, ${o.clients} POST clients`);
    }
    console.log(`\non ${redis.name}:`);
    results.push({ name: redis.name, rows: await measureOn(processes, redis, o) });
    await redis.stop();
  }
  for (const { name, rows } of results) {
    console.log(`\n${name}${o.repeats > 1 ? `, median of ${o.repeats} passes` : ''}:\n${table(rows)}\n\n${verdict(rows)}\n\n${rows.map(commandsLine).join('\n')}`);
    console.log(`\nLight load (closed loop, ${o.lightRuns} runs per client count):\n${lightTable(rows.flatMap((r) => r.light))}`);
  }
  if (!o.write) return;
  if (o.redisCluster) writeBlock(CLUSTER_SECTION, clusterSection(results, m!, command, source, o));
  else writeBlock(RUNS_SECTION, generated(results[0]!.rows, m!, command, source, o));
}

await runBench('bench:runs', options.limitSec, async (processes) => {
  try {
    await (options.mode === 'throughput' ? main(processes, options) : mainMode(processes, options));
  } finally {
    // The processes write their CPU profiles as they exit.
    await processes.stopAll();
    if (profileDir) {
      for (const { name, path } of profilesIn(profileDir, processes.names)) {
        console.log(`\n== CPU profile: ${name} (${path})\n${summarizeProfile(path, windows).join('\n')}`);
      }
    }
  }
});
