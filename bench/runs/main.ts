import { mkdtempSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { isCluster, type RedisClient } from '../../src/adapters/redis/connection.js';
import { RedisKeys } from '../../src/adapters/redis/keys.js';
import { lightTable, measureLight } from './light.js';
import { fireBatch, RunEndWatcher, type BatchResult } from './load.js';
import { reviewSection, reviewSummary, reviewTable, waitSection, waitSummary, waitTable, writeModeSection, type Setup } from './modes-report.js';
import { parseOptions, type BenchOptions } from './options.js';
import { clientAddresses, commandLines, countCommands, monotonicUs, profilesIn, summarizeProfile } from './profile.js';
import { startNodeProcess, type BenchChild } from './processes.js';
import { startBenchRedis, type BenchRedis } from './redis-backend.js';
import { clusterSection, commandsLine, generated, machine, sourceRevision, table, verdict, writeClusterSection, writeSection, type Measurement } from './report.js';
import { measureReviewFlow, type ReviewFlow, type ReviewMeasurement } from './review.js';
import { ChannelRunStops, RunEventStream, type RunStops } from './run-events.js';
import { callsPerRun, commandCalls, cpuMs } from './stats.js';
import { measureWaitFlow, type ProcessGroups, type WaitFlow, type WaitMeasurement } from './wait.js';

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
const PREFIX = 'agentplane';
const options = parseOptions(process.argv.slice(2));
const command = ['npm run bench:runs', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' ');
const watchdog = setTimeout(() => {
  console.error(`bench:runs: stopped after --limit-sec ${options.limitSec}; every process it started is killed.`);
  process.exit(2);
}, options.limitSec * 1000);

const profileDir = options.profile ? mkdtempSync(join(tmpdir(), 'agentplane-bench-runs-')) : undefined;
const nodeArgs = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
const names = new Map<number, string>();
const started: BenchChild[] = [];
/** Monotonic µs spans of the measured batches: CPU profiles are summarised over these only. */
const windows: [number, number][] = [];

/** The settings of every process: where Redis is (REDIS_URL, or REDIS_CLUSTER_NODES) and the rest. */
function sharedEnv(redis: Record<string, string>): Record<string, string> {
  return { ...redis, SERVICE_KEY_PREFIX: PREFIX, LOG_LEVEL: 'warn', SERVICE_SHUTDOWN_DELAY_MS: '0' };
}

async function startChild(start: Promise<BenchChild>): Promise<BenchChild> {
  const child = await start;
  started.push(child);
  names.set(child.pid, child.name);
  return child;
}

async function measure(redis: BenchRedis, api: BenchChild, watcher: RunEndWatcher, admin: RedisClient, workerCount: number, concurrency: number, pass: number, onLastPass: (() => Promise<void>) | undefined): Promise<Measurement> {
  const workers = await Promise.all(
    Array.from({ length: workerCount }, (_, i) =>
      startChild(
        startNodeProcess({
          name: `worker ${i + 1}/${workerCount} (concurrency ${concurrency}, pass ${pass})`,
          entry: 'src/main/worker.ts',
          portVariable: 'WORKER_PORT',
          env: { ...sharedEnv(redis.env), WORKER_CONCURRENCY: String(concurrency) },
          nodeArgs,
        }),
      ),
    ),
  );
  const batch = (runs: number): Promise<BatchResult> =>
    fireBatch({ apiUrl: api.url, runs, clients: options.clients, watcher, timeoutMs: Math.max(60_000, runs * 20) });
  try {
    await batch(options.warmup);
    const groups = { api: [api.pid], workers: workers.map((w) => w.pid), redis: redis.pids(), bench: [process.pid] };
    const cpu = () => Object.fromEntries(Object.entries(groups).map(([k, pids]) => [k, pids.reduce((s, pid) => s + cpuMs(pid), 0)]));
    const loadAvg = loadavg()[0]!;
    const cpuBefore = cpu();
    const callsBefore = await commandCalls(admin);
    const from = monotonicUs();
    const result = await batch(options.runs);
    windows.push([from, monotonicUs()]);
    const cpuAfter = cpu();
    const callsAfter = await commandCalls(admin);
    const perRun = (k: string) => (cpuAfter[k]! - cpuBefore[k]!) / result.runs;
    const usedMs = Object.keys(groups).reduce((sum, k) => sum + cpuAfter[k]! - cpuBefore[k]!, 0);
    const lightContext = { apiUrl: api.url, watcher, admin, groups, workers: workerCount, concurrency };
    const light = [];
    for (const clients of options.lightClients) light.push(await measureLight(lightContext, clients, options.lightRuns));
    await onLastPass?.();
    return {
      workers: workerCount,
      concurrency,
      batch: result,
      light,
      cpuMsPerRun: { api: perRun('api'), workers: perRun('workers'), redis: perRun('redis'), bench: perRun('bench') },
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

function median(passes: Measurement[]): Measurement {
  const sorted = [...passes].sort((a, b) => a.batch.runsPerSec - b.batch.runsPerSec);
  return { ...sorted[Math.floor((sorted.length - 1) / 2)]!, passes: passes.map((p) => p.batch.runsPerSec) };
}

/** `--mode wait` and `--mode review`: one set-up, every flow with every client count. */
async function mainMode(o: BenchOptions): Promise<void> {
  const embedded = o.embedded;
  const setup: Setup = { embedded, workers: embedded ? 0 : o.workers[0]!, concurrency: o.concurrency[0]!, pollMs: o.pollMs, runs: o.runs, warmup: o.warmup };
  // Held waits and the event stream count against the per-caller stream caps (20 by default).
  const modeEnv = { SERVICE_RATE_LIMIT: 'off', SERVICE_SSE_MAX_PER_PRINCIPAL: '0', SERVICE_SSE_MAX_PER_TENANT: '0' };
  let redis: BenchRedis | undefined;
  let redisVersion = 'n/a';
  let env: Record<string, string>;
  if (embedded) {
    env = { REDIS_URL: '', SERVICE_KEY_PREFIX: PREFIX, LOG_LEVEL: 'warn', SERVICE_SHUTDOWN_DELAY_MS: '0', WORKER_CONCURRENCY: String(setup.concurrency) };
  } else {
    redis = await startBenchRedis(false);
    backends.push(redis);
    redisVersion = await versionOf(redis);
    env = sharedEnv(redis.env);
  }
  const api = await startChild(startNodeProcess({ name: embedded ? 'api (embedded)' : 'api', entry: 'src/main/api.ts', portVariable: 'SERVICE_PORT', env: { ...env, ...modeEnv } }));
  const workers = await Promise.all(
    Array.from({ length: setup.workers }, (_, i) =>
      startChild(
        startNodeProcess({
          name: `worker ${i + 1}/${setup.workers} (concurrency ${setup.concurrency})`,
          entry: 'src/main/worker.ts',
          portVariable: 'WORKER_PORT',
          env: { ...env, WORKER_CONCURRENCY: String(setup.concurrency) },
        }),
      ),
    ),
  );
  const groups: ProcessGroups = { api: [api.pid], workers: workers.map((w) => w.pid), redis: redis ? redis.pids() : [] };
  let events: RunStops | undefined;
  const m = machine(redisVersion);
  const source = sourceRevision();
  const where = embedded ? `embedded (one API process, concurrency ${setup.concurrency})` : `Redis ${m.redis}, ${setup.workers} workers × ${setup.concurrency}`;
  console.log(
    `bench:runs --mode ${o.mode} on ${m.cores} cores (${m.cpu}), ${m.memGiB} GiB, Node ${m.node}, ${where}; ${source}; ` +
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
      if (o.write) {
        writeModeSection('wait', embedded, waitSection(rows, m, setup, command, source));
        console.log(`BENCHMARKS.md: section "## Runs: wait and review" (runs-wait${embedded ? '-embedded' : ''}) updated.`);
      }
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
      if (o.write) {
        writeModeSection('review', embedded, reviewSection(rows, m, setup, command, source));
        console.log(`BENCHMARKS.md: section "## Runs: wait and review" (runs-review${embedded ? '-embedded' : ''}) updated.`);
      }
    }
  } finally {
    events?.close();
  }
}

/** Backends started by the benchmark, stopped at the end whatever happens. */
const backends: BenchRedis[] = [];

async function versionOf(redis: BenchRedis): Promise<string> {
  const info = await redis.client('bench:version').info('server');
  return /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
}

/** Every configuration on one Redis (the API started and stopped here): the median pass of each. */
async function measureOn(redis: BenchRedis, o: BenchOptions): Promise<Measurement[]> {
  const admin = redis.client('bench:admin');
  const api = await startChild(
    startNodeProcess({ name: 'api', entry: 'src/main/api.ts', portVariable: 'SERVICE_PORT', env: { ...sharedEnv(redis.env), SERVICE_RATE_LIMIT: 'off' }, nodeArgs }),
  );
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
        const row = await measure(redis, api, watcher, admin, w, c, pass, last ? commandCounter(redis.env.REDIS_URL!, api, watcher, apiClients) : undefined);
        console.log(table([row]).split('\n').slice(pass === 1 && i === 0 ? 0 : 2).join('\n'));
        passes.set(`${w}:${c}`, [...(passes.get(`${w}:${c}`) ?? []), row]);
      }
    }
    return [...passes.values()].map(median);
  } finally {
    await api.stop();
  }
}

async function main(o: BenchOptions): Promise<void> {
  const results: { name: string; rows: Measurement[] }[] = [];
  let m: ReturnType<typeof machine> | undefined;
  const source = sourceRevision();
  for (const cluster of o.redisCluster ? [false, true] : [false]) {
    const redis = await startBenchRedis(cluster);
    backends.push(redis);
    if (!m) {
      m = machine(await versionOf(redis));
      console.log(`bench:runs on ${m.cores} cores (${m.cpu}), ${m.memGiB} GiB, Node ${m.node}, Redis ${m.redis}; ${source}; ${o.runs} runs after ${o.warmup} warm-up, ${o.clients} POST clients`);
    }
    console.log(`\non ${redis.name}:`);
    results.push({ name: redis.name, rows: await measureOn(redis, o) });
    await redis.stop();
  }
  for (const { name, rows } of results) {
    console.log(`\n${name}${o.repeats > 1 ? `, median of ${o.repeats} passes` : ''}:\n${table(rows)}\n\n${verdict(rows)}\n\n${rows.map(commandsLine).join('\n')}`);
    console.log(`\nLight load (closed loop, ${o.lightRuns} runs per client count):\n${lightTable(rows.flatMap((r) => r.light))}`);
  }
  if (!o.write) return;
  if (o.redisCluster) {
    writeClusterSection(clusterSection(results, m!, command, source, o));
    console.log('BENCHMARKS.md: section "## Redis Cluster" (runs) updated.');
  } else {
    writeSection(generated(results[0]!.rows, m!, command, source, o));
    console.log('BENCHMARKS.md: section "## Runs" updated.');
  }
}

let failed = false;
try {
  await (options.mode === 'throughput' ? main(options) : mainMode(options));
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  for (const child of [...started].reverse()) await child.stop();
  for (const redis of backends) await redis.stop();
  clearTimeout(watchdog);
}
if (profileDir) {
  for (const { name, path } of profilesIn(profileDir, names)) {
    console.log(`\n== CPU profile: ${name} (${path})\n${summarizeProfile(path, windows).join('\n')}`);
  }
}
process.exitCode = failed ? 1 : 0;
// Should a handle linger (a socket in close), the benchmark still ends by itself.
setTimeout(() => process.exit(), 2000).unref();
