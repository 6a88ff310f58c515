import { mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { benchCommand, count, parseFlags, toggle } from '../harness/args.js';
import { load, type Endpoint, type LoadResult } from '../harness/autocannon.js';
import type { BenchChild } from '../harness/processes.js';
import { monotonicUs, profilesIn, summarizeProfile } from '../harness/profile.js';
import { redisVersion, type BenchRedis } from '../harness/redis.js';
import { machine, sourceRevision, writeBlock } from '../harness/report.js';
import { inRoundOrder, medianBy } from '../harness/rounds.js';
import { runBench, STACK_ENV, type BenchProcesses, type Stack } from '../harness/run.js';
import { CLUSTER_SECTION, clusterSection, generated, HTTP_SECTION, misses, type Pass, type Row } from './report.js';
import { seedSessions, sessionId } from './seed.js';

/**
 * `npm run bench:http`: GET /api/sessions (of 10,000 stored sessions, limit 50), GET and POST
 * /api/sessions/state against one API replica (src/main/api.ts) on a private redis-server, and
 * in the same run the same answers from a bare Koa process (the framework's ceiling) and, for
 * the GETs, from a bare Koa process doing the store's Redis reads; autocannon, 50 connections.
 * Writes the generated part of the `## HTTP` section of BENCHMARKS.md.
 * Options: --duration S (10), --warmup S (3), --connections N (50), --sessions N (10000),
 * --repeats N (1; the pass with the median API / bare ratio is reported), --profile (the API
 * under --cpu-prof; prints its top self time per endpoint; writes nothing), --no-write.
 * --redis-cluster: instead, the API alone on a redis-server and then on a Redis Cluster of six
 * (3 masters, 3 replicas), same endpoints, same run; writes the `## Redis Cluster` section.
 */
const USAGE = 'npm run bench:http -- [--duration S] [--warmup S] [--connections N] [--sessions N] [--repeats N] [--profile] [--no-write] [--redis-cluster]';
const FLAGS = { duration: count(10), warmup: count(3), connections: count(50), sessions: count(10_000), repeats: count(1), profile: toggle(), noWrite: toggle(), redisCluster: toggle() };
const PREFIX = STACK_ENV.SERVICE_KEY_PREFIX;
const argv = process.argv.slice(2);
const { flags } = parseFlags(argv, FLAGS, USAGE);
const options = {
  durationSec: flags.duration,
  warmupSec: flags.warmup,
  connections: flags.connections,
  sessions: flags.sessions,
  repeats: flags.repeats,
  profile: flags.profile,
  write: !flags.noWrite && !flags.profile,
  redisCluster: flags.redisCluster,
};
const command = benchCommand('bench:http', argv);

/** The measured endpoints; `reads`: the bare-with-reads process mirrors its store reads. */
const endpoints: (Endpoint & { reads: boolean })[] = [
  { name: 'GET /api/sessions', method: 'GET', path: () => '/api/sessions?limit=50', reads: true },
  { name: 'GET /api/sessions/state', method: 'GET', path: (n) => `/api/sessions/state?session_id=${sessionId(n % options.sessions)}`, reads: true },
  {
    name: 'POST /api/sessions/state',
    method: 'POST',
    path: (n) => `/api/sessions/state?session_id=${sessionId(n % options.sessions)}`,
    body: (n) => JSON.stringify({ state: { edited: n } }),
    reads: false,
  },
];

/** Each endpoint once on the API: checks it answers 200 and keeps the bytes for the bare processes. */
async function capture(apiUrl: string): Promise<Record<string, { status: number; body: string }>> {
  const captured: Record<string, { status: number; body: string }> = {};
  for (const e of endpoints) {
    const response = await fetch(`${apiUrl}${e.path(0)}`, {
      method: e.method,
      ...(e.body ? { body: e.body(0), headers: { 'content-type': 'application/json' } } : {}),
    });
    const body = await response.text();
    if (response.status !== 200) throw new Error(`${e.name} answered ${response.status}: ${body.slice(0, 300)}`);
    captured[`${e.method} ${new URL(e.path(0), apiUrl).pathname}`] = { status: 200, body };
  }
  const listed = (JSON.parse(captured['GET /api/sessions']!.body) as { sessions: unknown[] }).sessions.length;
  if (listed !== 50) throw new Error(`GET /api/sessions?limit=50 listed ${listed} sessions`);
  return captured;
}

/** The API on `redis` (LOG_LEVEL=warn, SERVICE_RATE_LIMIT=off, no auth), no workers. */
function startApi(processes: BenchProcesses, redis: BenchRedis, nodeArgs: string[] = []): Promise<Stack> {
  return processes.stack({ redis, env: { ...STACK_ENV, SERVICE_RATE_LIMIT: 'off' }, workers: 0, nodeArgs });
}

/** The `## HTTP` table: the API, bare Koa and bare Koa with the store's reads, pass after pass. */
async function main(processes: BenchProcesses): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'agentplane-bench-http-'));
  /** Monotonic µs window of each measured API load: the profile is read only inside it. */
  const measured = new Map<string, [number, number]>();
  const redis = await processes.redis();
  const redisUrl = redis.env.REDIS_URL!;
  const seeder = new Redis(redisUrl, { enableAutoPipelining: true, maxRetriesPerRequest: 3 });
  const seededMs = await seedSessions(seeder, PREFIX, options.sessions).finally(() => seeder.disconnect());
  console.log(`seeded ${options.sessions} sessions in ${seededMs} ms`);
  const { api } = await startApi(processes, redis, options.profile ? ['--cpu-prof', '--cpu-prof-dir', dir] : []);
  const responses = join(dir, 'responses.json');
  writeFileSync(responses, JSON.stringify(await capture(api.url)));
  const bareProcess = (name: string, extra: Record<string, string>) =>
    processes.node({ name, entry: 'bench/http/bare-server.ts', portVariable: 'SERVICE_PORT', env: { BARE_RESPONSES: responses, REDIS_URL: '', ...extra } });
  const bare = await bareProcess('bare koa', {});
  const withReads = await bareProcess('bare koa + reads', { REDIS_URL: redisUrl, SERVICE_KEY_PREFIX: PREFIX });

  const passes = new Map<string, Pass[]>();
  for (let pass = 1; pass <= options.repeats; pass++) {
    for (const endpoint of endpoints) {
      const measure = async (target: BenchChild) => {
        await load(target.url, endpoint, options.connections, options.warmupSec);
        const from = monotonicUs();
        const result = await load(target.url, endpoint, options.connections, options.durationSec);
        if (target === api) measured.set(`${endpoint.name}, pass ${pass}`, [from, monotonicUs()]);
        return result;
      };
      const loadAvg = loadavg()[0]!;
      // Alternate the order, so a drift in the machine's load does not favour one side.
      const results = new Map<BenchChild, LoadResult>();
      for (const target of inRoundOrder(pass, [api, bare, ...(endpoint.reads ? [withReads] : [])])) results.set(target, await measure(target));
      const result: Pass = { api: results.get(api)!, bare: results.get(bare)!, reads: results.get(withReads), loadAvg };
      passes.set(endpoint.name, [...(passes.get(endpoint.name) ?? []), result]);
      console.log(
        `pass ${pass} ${endpoint.name}: ` +
          [...results].map(([target, r]) => `${target.name} ${Math.round(r.reqPerSec)} req/s p50 ${r.p50Ms} p99 ${r.p99Ms} ms`).join('; '),
      );
    }
  }
  // The pass with the median API / bare ratio: the sides measured back to back, under the same load.
  const rows: Row[] = [...passes].map(([endpoint, all]) => ({ endpoint, ...medianBy(all, (p) => p.api.reqPerSec / p.bare.reqPerSec), passes: all }));

  const setup =
    `Each endpoint: ${options.warmupSec} s warm-up, then ${options.durationSec} s measured with ${options.connections} connections on ` +
    'each process back to back (API first in odd passes, last in even ones); ' +
    `${options.repeats > 1 ? `${options.repeats} passes, the pass with the median API / bare ratio reported` : 'one pass'}. ` +
    `The API is one \`src/main/api.ts\` process on Redis (LOG_LEVEL=warn, SERVICE_RATE_LIMIT=off, no auth) holding ` +
    `${options.sessions.toLocaleString('en-US')} sessions (seeded through RedisStore in ${(seededMs / 1000).toFixed(1)} s); ` +
    'GET /api/sessions asks for `limit=50`; the state requests rotate over all sessions; each POST merges `{"edited": n}` and so ' +
    'appends a checkpoint. *Bare Koa*: one middleware answering the bytes the API answered (captured first), draining POST ' +
    'bodies. *Bare + reads*: the same, after the Redis reads the store does for that GET (the listSessions script: ZREVRANGE + 50 HMGET in one call; LINDEX). ' +
    "req/s is autocannon's mean of its 1-second samples; latencies have 1 ms resolution.";
  const section = generated(rows, machine(await redisVersion(redis.client('bench:version'))), command, sourceRevision(), setup);
  console.log(`\n${section}\n`);
  for (const row of rows) {
    const missed = misses(row);
    console.log(`${row.endpoint}: ${missed.length === 0 ? 'targets met' : `target missed: ${missed.join('; ')}`}`);
  }
  if (options.write) writeBlock(HTTP_SECTION, section);
  // The API writes its CPU profile as it exits.
  await processes.stopAll();
  if (options.profile) {
    for (const { path } of profilesIn(dir, new Map())) {
      for (const [name, window] of measured) {
        console.log(`\nCPU profile of the API process under ${name} (${path}):`);
        for (const line of summarizeProfile(path, [window], 25)) console.log(line);
      }
    }
  }
}

/** `--redis-cluster`: the API alone on each Redis, one after the other, every endpoint. */
async function compareBackends(processes: BenchProcesses): Promise<void> {
  const results: { name: string; seededMs: number; rows: { endpoint: string; api: LoadResult; loadAvg: number }[] }[] = [];
  let version = 'unknown';
  for (const cluster of [false, true]) {
    const redis = await processes.redis(cluster);
    version = await redisVersion(redis.client('bench:version'));
    const seededMs = await seedSessions(redis.client('bench:seed'), PREFIX, options.sessions);
    console.log(`${redis.name}: seeded ${options.sessions} sessions in ${seededMs} ms`);
    const { api, stop } = await startApi(processes, redis);
    await capture(api.url);
    const rows = [];
    for (const endpoint of endpoints) {
      const loadAvg = loadavg()[0]!;
      await load(api.url, endpoint, options.connections, options.warmupSec);
      const result = await load(api.url, endpoint, options.connections, options.durationSec);
      console.log(`${redis.name} ${endpoint.name}: ${Math.round(result.reqPerSec)} req/s p50 ${result.p50Ms} p99 ${result.p99Ms} ms`);
      rows.push({ endpoint: endpoint.name, api: result, loadAvg });
    }
    results.push({ name: redis.name, seededMs, rows });
    await stop();
    await redis.stop();
  }
  const setup =
    `Each endpoint: ${options.warmupSec} s warm-up, then ${options.durationSec} s measured with ${options.connections} connections on ` +
    `one \`src/main/api.ts\` process (LOG_LEVEL=warn, SERVICE_RATE_LIMIT=off, no auth) holding ${options.sessions.toLocaleString('en-US')} ` +
    'sessions of DefaultTenant (one hash tag: on the cluster they all live on one master, as one tenant\'s do); the same requests as `## HTTP`. ' +
    'One Redis after the other in the same run.';
  const section = clusterSection(results, machine(version), command, sourceRevision(), setup);
  console.log(`\n${section}\n`);
  if (options.write) writeBlock(CLUSTER_SECTION, section);
}

await runBench('bench:http', 900, (processes) => (options.redisCluster ? compareBackends(processes) : main(processes)));
