import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchCommand, count, counts, parseFlags, toggle } from '../harness/args.js';
import { sleep as pause } from '../harness/client.js';
import { runNodeScript, type BenchChild } from '../harness/processes.js';
import { monotonicUs, profilesIn, summarizeProfile } from '../harness/profile.js';
import { redisVersion, type BenchRedis } from '../harness/redis.js';
import { machine, sourceRevision, writeBlock } from '../harness/report.js';
import { runBench, STACK_ENV, type BenchProcesses } from '../harness/run.js';
import { cpuMs } from '../harness/stats.js';
import { SseClientPool } from './clients.js';
import { floorTable, section, SSE_SECTION, table, verdict, type FloorMeasurement, type SseMeasurement } from './report.js';

/**
 * `npm run bench:sse`: N idle SSE clients on one API replica, then events published one by
 * one through the EventBus by a separate process; publish → receive latency at every client
 * and the replica's RSS per idle connection. Starts its own redis-server and one API process
 * per client count, on loopback, and stops everything itself. See BENCHMARKS.md, section SSE.
 */
const USAGE =
  'npm run bench:sse -- [--clients 1000,5000,10000] [--events 100] [--interval-ms 500,100] [--floor-clients 5000] [--profile] [--no-write] [--limit-sec 900]';
const FLAGS = {
  clients: counts([1000, 5000, 10_000]),
  events: count(100),
  /** Pauses between two publishes, one measurement each, in this order. */
  intervalMs: counts([500, 100]),
  /** Clients of the memory floor comparison (0: skip it). */
  floorClients: count(5000, 0),
  /** CPU-profile the API process and print where its time went while events were delivered (implies no write). */
  profile: toggle(),
  noWrite: toggle(),
  limitSec: count(900),
};

const PREFIX = 'agentplane-bench-sse';
/** About this many clients read as events arrive and are timed; the rest read at the end. */
const TIMED_CLIENTS = 500;
const argv = process.argv.slice(2);
const { flags } = parseFlags(argv, FLAGS, USAGE);
const options = { ...flags, intervalsMs: flags.intervalMs, write: !flags.noWrite && !flags.profile };
const command = benchCommand('bench:sse', argv);

const rssOf = (pid: number) => Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024;

async function openStreams(api: BenchChild): Promise<number> {
  const text = await (await fetch(`${api.url}/metrics`)).text();
  return Number(/^agentplane_sse_connections (\d+)$/m.exec(text)?.[1]);
}

async function waitForStreams(api: BenchChild, count: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while ((await openStreams(api)) !== count) {
    if (Date.now() > deadline) throw new Error(`the API does not report ${count} open streams`);
    await pause(200);
  }
}

/** Runs the publishing process to completion. */
async function publish(redisUrl: string, events: number, intervalMs: number): Promise<void> {
  const env = { REDIS_URL: redisUrl, SERVICE_KEY_PREFIX: PREFIX, EVENTS: String(events), INTERVAL_MS: String(intervalMs) };
  await runNodeScript('bench/sse/publisher.ts', { env, print: true });
}

async function measure(processes: BenchProcesses, redis: BenchRedis, clients: number): Promise<SseMeasurement[]> {
  const redisUrl = redis.env.REDIS_URL!;
  const profileDir = options.profile ? mkdtempSync(join(tmpdir(), 'agentplane-bench-sse-')) : undefined;
  const { api, stop } = await processes.stack({
    redis,
    env: { ...STACK_ENV, SERVICE_KEY_PREFIX: PREFIX, SERVICE_RATE_LIMIT: 'off', SERVICE_SSE_MAX_PER_PRINCIPAL: '0', SERVICE_SSE_MAX_PER_TENANT: '0' },
    workers: 0,
    apiName: `api (${clients} clients)`,
    nodeArgs: profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [],
  });
  /** Monotonic µs spans of the deliveries: the profile is summarised over these only. */
  const windows: [number, number][] = [];
  try {
    // Warm-up: the code paths of a stream and of a delivery run once before anything is measured.
    const warm = new SseClientPool(api.port);
    await warm.open(20);
    await publish(redisUrl, 5, 10);
    await warm.waitForTimed(5, 10_000);
    warm.close();
    await waitForStreams(api, 0);
    await pause(1000);
    const rssBefore = rssOf(api.pid);

    const pool = new SseClientPool(api.port, Math.max(1, Math.round(clients / TIMED_CLIENTS)));
    await pool.open(clients);
    await waitForStreams(api, clients);
    await pause(2000);
    const rssWith = rssOf(api.pid);

    const phases = [];
    for (const [i, intervalMs] of options.intervalsMs.entries()) {
      const loadAvg = loadavg()[0]!;
      const cpuBefore = cpuMs(api.pid);
      const from = monotonicUs();
      await publish(redisUrl, options.events, intervalMs);
      await pool.waitForTimed((i + 1) * options.events, 60_000);
      windows.push([from, monotonicUs()]);
      const deliveryCpuMs = cpuMs(api.pid) - cpuBefore;
      phases.push({ intervalMs, loadAvg, deliveryCpuMs, latenciesMs: pool.takeLatencies().sort((a, b) => a - b) });
    }
    const total = options.events * options.intervalsMs.length;
    const delivered = await pool.drainAll(total, 60_000);
    const { dropped, timed } = pool;
    pool.close();
    // Deliveries are counted over every phase; the shortfall, if any, is shown on the last row.
    return phases.map((phase, i) => ({
      clients,
      timed,
      events: options.events,
      ...phase,
      missing: i === phases.length - 1 ? clients * total - delivered : 0,
      dropped: i === phases.length - 1 ? dropped : 0,
      rssBefore,
      rssWith,
    }));
  } finally {
    await stop();
    if (profileDir) {
      for (const { path } of profilesIn(profileDir, new Map([[api.pid, api.name]]))) {
        console.log([`${api.name}, while events were delivered:`, ...summarizeProfile(path, windows, 20)].join('\n'));
      }
    }
  }
}

/** Live heap and RSS per idle connection of one server variant (bench/sse/floor.ts). */
async function floor(variant: FloorMeasurement['variant'], clients: number): Promise<FloorMeasurement> {
  const output = await runNodeScript('bench/sse/floor.ts', { args: [variant, String(clients)], nodeArgs: ['--expose-gc'] });
  return JSON.parse(output) as FloorMeasurement;
}

/** Each client count on its own API process, then the memory floor of each server variant. */
async function main(processes: BenchProcesses): Promise<void> {
  const redis = await processes.redis();
  const rows: SseMeasurement[] = [];
  const floors: FloorMeasurement[] = [];
  for (const clients of options.clients) {
    const measured = await measure(processes, redis, clients);
    rows.push(...measured);
    console.log(table(measured).split('\n').slice(2).join('\n'));
  }
  if (options.floorClients > 0) {
    for (const variant of ['pipe', 'node', 'koa', 'agentplane'] as const) floors.push(await floor(variant, options.floorClients));
    console.log(floorTable(floors));
  }
  const version = await redisVersion(redis.client('bench:version'));
  const notes = [
    `Clients are raw HTTP/1.1 sockets in the benchmark process (not EventSource, too heavy at 10k), all on one API process; for each rate, ${options.events} events are published by a separate process through the EventBus (XADD + PUBLISH script), at a steady pace.`,
    `Latency: wall-clock time from just before the publish call to the moment a client read the frame. About ${TIMED_CLIENTS} clients, spread evenly over the connection order (the fan-out order), read as events arrive and are timed; the others leave the frames in their socket buffers (the server does the same work for them) and are counted at the end, so the benchmark process does not take the CPU the server needs.`,
    '"delivered" counts every (client, event) pair of all rates together; a shortfall, if any, shows on the last row of a client count. "API CPU per delivery": the API process CPU time (user + system) over one rate, divided by its (client, event) pairs; most of it is the kernel writing to loopback sockets.',
    'RSS per idle connection: the API process RSS with all clients connected and idle for 2 s minus its RSS after a warm-up with no client, divided by the client count.',
    `Open files: each side holds one descriptor per client; \`ulimit -n\` was ${spawnSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).stdout.trim()} here (raise it before measuring more than that).`,
  ];
  const body = section(command, machine(`redis ${version}`), sourceRevision(), rows, floors, notes);
  console.log(`\n${verdict(rows)}`);
  if (options.write) writeBlock(SSE_SECTION, body);
}

await runBench('bench:sse', options.limitSec, main);
