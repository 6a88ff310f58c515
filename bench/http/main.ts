import { mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { flagsOf } from '../flags.js';
import { load, type Endpoint, type LoadResult } from './load.js';
import { clusterSection, generated, misses, writeClusterSection, writeSection, type Pass, type Row } from './report.js';
import { seedSessions, sessionId } from './seed.js';
import { monotonicUs, profilesIn, summarizeProfile } from '../runs/profile.js';
import { startNodeProcess, startRedisServer, type BenchChild } from '../runs/processes.js';
import { startBenchRedis } from '../runs/redis-backend.js';
import { machine, sourceRevision } from '../runs/report.js';

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
const PREFIX = 'agentplane';
const argv = process.argv.slice(2);
const { flag, number } = flagsOf(argv);
const options = {
  durationSec: number('duration', 10),
  warmupSec: number('warmup', 3),
  connections: number('connections', 50),
  sessions: number('sessions', 10_000),
  repeats: number('repeats', 1),
  profile: flag('profile'),
  write: !flag('no-write') && !flag('profile'),
  redisCluster: flag('redis-cluster'),
};
const command = ['npm run bench:http', ...(argv.length > 0 ? ['--', ...argv] : [])].join(' ');
const watchdog = setTimeout(() => {
  console.error('bench:http: stopped after 15 minutes; every process it started is killed.');
  process.exit(2);
}, 900_000);

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

async function main(): Promise<void> {
  const children: BenchChild[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'agentplane-bench-http-'));
  /** Monotonic µs window of each measured API load: the profile is read only inside it. */
  const measured = new Map<string, [number, number]>();
  try {
    const redis = await startRedisServer();
    children.push(redis);
    const seeder = new Redis(redis.url, { enableAutoPipelining: true, maxRetriesPerRequest: 3 });
    const seededMs = await seedSessions(seeder, PREFIX, options.sessions).finally(() => seeder.disconnect());
    console.log(`seeded ${options.sessions} sessions in ${seededMs} ms`);
    const env = { REDIS_URL: redis.url, SERVICE_KEY_PREFIX: PREFIX };
    const api = await startNodeProcess({
      name: 'api',
      entry: 'src/main/api.ts',
      portVariable: 'SERVICE_PORT',
      env: { ...env, LOG_LEVEL: 'warn', SERVICE_RATE_LIMIT: 'off', SERVICE_SHUTDOWN_DELAY_MS: '0' },
      nodeArgs: options.profile ? ['--cpu-prof', '--cpu-prof-dir', dir] : [],
    });
    children.push(api);
    const responses = join(dir, 'responses.json');
    writeFileSync(responses, JSON.stringify(await capture(api.url)));
    const bareProcess = (name: string, extra: Record<string, string>) =>
      startNodeProcess({ name, entry: 'bench/http/bare-server.ts', portVariable: 'SERVICE_PORT', env: { BARE_RESPONSES: responses, REDIS_URL: '', ...extra } });
    const bare = await bareProcess('bare koa', {});
    children.push(bare);
    const withReads = await bareProcess('bare koa + reads', env);
    children.push(withReads);

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
        const order = [api, bare, ...(endpoint.reads ? [withReads] : [])];
        const results = new Map<BenchChild, LoadResult>();
        for (const target of pass % 2 === 1 ? order : order.reverse()) results.set(target, await measure(target));
        const result: Pass = { api: results.get(api)!, bare: results.get(bare)!, reads: results.get(withReads), loadAvg };
        passes.set(endpoint.name, [...(passes.get(endpoint.name) ?? []), result]);
        console.log(
          `pass ${pass} ${endpoint.name}: ` +
            [...results].map(([target, r]) => `${target.name} ${Math.round(r.reqPerSec)} req/s p50 ${r.p50Ms} p99 ${r.p99Ms} ms`).join('; '),
        );
      }
    }
    const rows: Row[] = [...passes].map(([endpoint, all]) => {
      // The pass with the median API / bare ratio: the sides measured back to back, under the same load.
      const ratio = (p: Pass) => p.api.reqPerSec / p.bare.reqPerSec;
      return { endpoint, ...[...all].sort((a, b) => ratio(a) - ratio(b))[Math.floor((all.length - 1) / 2)]!, passes: all };
    });

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
    const section = generated(rows, machine((await redisVersion(redis.url)) ?? 'unknown'), command, sourceRevision(), setup);
    console.log(`\n${section}\n`);
    for (const row of rows) {
      const missed = misses(row);
      console.log(`${row.endpoint}: ${missed.length === 0 ? 'targets met' : `target missed: ${missed.join('; ')}`}`);
    }
    if (options.write) writeSection(section);
  } finally {
    for (const child of children.reverse()) await child.stop();
    clearTimeout(watchdog);
  }
  if (options.profile) {
    for (const { path } of profilesIn(dir, new Map())) {
      for (const [name, window] of measured) {
        console.log(`\nCPU profile of the API process under ${name} (${path}):`);
        for (const line of summarizeProfile(path, [window], 25)) console.log(line);
      }
    }
  }
}

async function redisVersion(url: string): Promise<string | undefined> {
  const { Redis } = await import('ioredis');
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    return /redis_version:(\S+)/.exec(await client.info('server'))?.[1];
  } finally {
    client.disconnect();
  }
}

/** `--redis-cluster`: the API alone on each Redis, one after the other, every endpoint. */
async function compareBackends(): Promise<void> {
  const results: { name: string; seededMs: number; rows: { endpoint: string; api: LoadResult; loadAvg: number }[] }[] = [];
  let version = 'unknown';
  try {
    for (const cluster of [false, true]) {
      const redis = await startBenchRedis(cluster);
      try {
        version = /redis_version:(\S+)/.exec(await redis.client('bench:version').info('server'))?.[1] ?? version;
        const seededMs = await seedSessions(redis.client('bench:seed'), PREFIX, options.sessions);
        console.log(`${redis.name}: seeded ${options.sessions} sessions in ${seededMs} ms`);
        const api = await startNodeProcess({
          name: 'api',
          entry: 'src/main/api.ts',
          portVariable: 'SERVICE_PORT',
          env: { ...redis.env, SERVICE_KEY_PREFIX: PREFIX, LOG_LEVEL: 'warn', SERVICE_RATE_LIMIT: 'off', SERVICE_SHUTDOWN_DELAY_MS: '0' },
        });
        try {
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
        } finally {
          await api.stop();
        }
      } finally {
        await redis.stop();
      }
    }
    const setup =
      `Each endpoint: ${options.warmupSec} s warm-up, then ${options.durationSec} s measured with ${options.connections} connections on ` +
      `one \`src/main/api.ts\` process (LOG_LEVEL=warn, SERVICE_RATE_LIMIT=off, no auth) holding ${options.sessions.toLocaleString('en-US')} ` +
      'sessions of DefaultTenant (one hash tag: on the cluster they all live on one master, as one tenant\'s do); the same requests as `## HTTP`. ' +
      'One Redis after the other in the same run.';
    const section = clusterSection(results, machine(version), command, sourceRevision(), setup);
    console.log(`\n${section}\n`);
    if (options.write) writeClusterSection(section);
  } finally {
    clearTimeout(watchdog);
  }
}

await (options.redisCluster ? compareBackends() : main());
