import { loadavg } from 'node:os';
import { RedisStore } from '../../src/adapters/redis/store.js';
import { benchCommand, count, parseFlags, toggle } from '../harness/args.js';
import { closedLoop, sleep } from '../harness/client.js';
import { redisVersion } from '../harness/redis.js';
import { machine, sourceRevision } from '../harness/report.js';
import { runBench, STACK_ENV, type BenchProcesses } from '../harness/run.js';
import { percentile } from '../harness/stats.js';

/**
 * `npm run bench:schedules`: N schedules (default 10,000) all due in the same minute, two worker
 * processes, one API process, a private redis-server. Every schedule must fire exactly once;
 * reports the spread between the due time and `fired_at`, and the time until every run
 * completed. Prints the BENCHMARKS.md section (written by hand; `--no-write`, which
 * bench/compare-trees.sh passes to every benchmark, changes nothing).
 */
const USAGE = 'npm run bench:schedules -- [--schedules N] [--workers N] [--no-write]';
const argv = process.argv.slice(2);
const { flags } = parseFlags(argv, { schedules: count(10_000), workers: count(2), noWrite: toggle() }, USAGE);
const TENANT = 'DefaultTenant';
const PREFIX = STACK_ENV.SERVICE_KEY_PREFIX;
const COUNT = flags.schedules;
const WORKERS = flags.workers;
const CREATE_CONCURRENCY = 64;
/** Ticks are awaited at most this long after the due minute. */
const AFTER_DUE_LIMIT_MS = 180_000;

async function metric(urls: string[], pattern: RegExp): Promise<number[]> {
  const texts = await Promise.all(urls.map((u) => fetch(`${u}/metrics`).then((r) => r.text())));
  return texts.map((t) => Number(pattern.exec(t)?.[1] ?? 0));
}

async function createAll(api: string, cron: string): Promise<string[]> {
  const ids: string[] = [];
  await closedLoop(CREATE_CONCURRENCY, COUNT, 600_000, async (n) => {
    const response = await fetch(`${api}/api/schedules`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ agent_id: 'echo', cron_expr: cron, input: { n } }),
    });
    if (response.status !== 201) throw new Error(`POST /api/schedules answered ${response.status}: ${await response.text()}`);
    ids.push(((await response.json()) as { id: string }).id);
  });
  return ids;
}

async function main(processes: BenchProcesses): Promise<void> {
  const redis = await processes.redis();
  const { api, workers } = await processes.stack({ redis, env: { ...STACK_ENV, SERVICE_RATE_LIMIT: 'off' }, workers: WORKERS, workerEnv: { WORKER_CONCURRENCY: '32' } });
  const workerUrls = workers.map((w) => w.url);

  // The due minute: the first one that leaves time to create every schedule (~500/s measured
  // on a loaded 2-core machine, halved for margin).
  const budgetMs = Math.max(20_000, COUNT * 4);
  const due = Math.ceil((Date.now() + budgetMs) / 60_000) * 60_000;
  const at = new Date(due);
  const cron = `${at.getUTCMinutes()} ${at.getUTCHours()} * * *`;
  console.log(`creating ${COUNT} schedules "${cron}" (UTC), due ${at.toISOString()}`);
  const createStart = Date.now();
  const ids = await createAll(api.url, cron);
  const createMs = Date.now() - createStart;
  if (Date.now() >= due) throw new Error(`creating took ${createMs} ms and ran past the due minute; lower --schedules`);
  console.log(`created in ${createMs} ms (${Math.round((COUNT * 1000) / createMs)}/s); waiting for ${at.toISOString()}`);
  const load = loadavg()[0]!;

  // Progress from the workers' counters; the exact figures come from the stored records below.
  const fireCounter = /agentplane_schedule_fires_total\{status="started"\} (\d+)/;
  const runCounter = /agentplane_runs_total\{agent_id="echo",status="completed"\} (\d+)/;
  await sleep(due - Date.now());
  for (;;) {
    const fired = (await metric(workerUrls, fireCounter)).reduce((a, b) => a + b, 0);
    const completed = (await metric(workerUrls, runCounter)).reduce((a, b) => a + b, 0);
    if (fired >= COUNT && completed >= COUNT) break;
    if (Date.now() - due > AFTER_DUE_LIMIT_MS) throw new Error(`after ${AFTER_DUE_LIMIT_MS} ms: ${fired} fired, ${completed} runs completed`);
    await sleep(200);
  }
  // Anything past the count would be a double fire: give stragglers a moment to show up.
  await sleep(3000);
  const perWorker = await metric(workerUrls, fireCounter);

  const client = redis.client('bench:check');
  const store = new RedisStore(client, { keyPrefix: PREFIX });
  const lags: number[] = [];
  const runEnds: number[] = [];
  const runIds = new Set<string>();
  const sessions = new Set<string>();
  const problems: string[] = [];
  for (let i = 0; i < ids.length; i += 500) {
    await Promise.all(
      ids.slice(i, i + 500).map(async (id) => {
        const history = await store.schedules.listScheduleHistory(TENANT, id);
        if (history.length !== 1) return void problems.push(`${id}: ${history.length} records`);
        const record = history[0]!;
        if (Date.parse(record.due_at) !== due || record.status !== 'completed' || !record.run_id) {
          return void problems.push(`${id}: ${JSON.stringify(record)}`);
        }
        lags.push(Date.parse(record.fired_at) - due);
        runIds.add(record.run_id);
        sessions.add(record.session_id);
        const run = await store.runs.getRun(TENANT, record.run_id);
        runEnds.push(Date.parse(run?.updated_at ?? '') - due);
      }),
    );
  }
  const sessionCount = await client.zcard(`${PREFIX}:{${TENANT}}:sessions`);
  const m = machine(await redisVersion(client));
  lags.sort((a, b) => a - b);
  runEnds.sort((a, b) => a - b);
  const exactlyOnce = problems.length === 0 && runIds.size === COUNT && sessions.size === COUNT && sessionCount === COUNT;
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const maxLag = lags.at(-1) ?? NaN;

  console.log(`
Command: \`${benchCommand('bench:schedules', argv)}\`
(${sourceRevision()}; ${m.cores} cores ${m.cpu}, ${m.memGiB} GiB, Node ${m.node}, Redis ${m.redis}; load average ${load.toFixed(1)} at the due minute)

${COUNT} schedules \`${cron}\` (all due ${at.toISOString()}), created through POST /api/schedules in ${s(createMs)};
${WORKERS} worker processes (fires: ${perWorker.join(' + ')}), WORKER_CONCURRENCY 32 for runs, 50 concurrent fires per worker.

| | first | p50 | p99 | max |
|---|---:|---:|---:|---:|
| due → \`fired_at\` | ${s(lags[0] ?? NaN)} | ${s(percentile(lags, 50))} | ${s(percentile(lags, 99))} | ${s(maxLag)} |
| due → run completed | ${s(runEnds[0] ?? NaN)} | ${s(percentile(runEnds, 50))} | ${s(percentile(runEnds, 99))} | ${s(runEnds.at(-1) ?? NaN)} |

Exactly once: ${exactlyOnce ? 'yes' : 'NO'} — ${lags.length} schedules with exactly one record for the due minute, ${runIds.size} distinct runs, ${sessionCount} sessions${problems.length ? `; problems: ${problems.slice(0, 5).join('; ')}` : ''}.
Target (all ${COUNT} fired within 30 s of the minute): ${maxLag <= 30_000 ? 'met' : 'MISSED'} (last fire ${s(maxLag)} after it; all runs completed ${s(runEnds.at(-1) ?? NaN)} after it).
`);
  if (!exactlyOnce) process.exitCode = 1;
}

await runBench('bench:schedules', 600, main);
