import { cpus } from 'node:os';
import { commandLine, describeMachine, generatedBlock, type Machine, type SectionPlace } from '../harness/report.js';
import { fixed, percentile } from '../harness/stats.js';
import { lightTable, type LightMeasurement } from './light.js';
import type { BatchResult } from './load.js';

/** One measured configuration. */
export interface Measurement {
  workers: number;
  concurrency: number;
  batch: BatchResult;
  /** The closed-loop batches, one per light-load client count: a run without a queue backlog. */
  light: LightMeasurement[];
  /** CPU ms per run in each process group over the measured batch. */
  cpuMsPerRun: { api: number; workers: number; redis: number; bench: number };
  /** Redis commands per run (script-inner ones included), most frequent first. */
  callsPerRun: [string, number][];
  /** runs/s of every pass of this configuration, for the spread. */
  passes: number[];
  /** 1-minute load average when the measured batch started (other users of the machine). */
  loadAvg: number;
  /** Share of the machine's cores our processes (API, workers, Redis, bench) used during the batch. */
  cpuShare: number;
}

/** The `## Runs` target: runs/s with 2 worker processes. */
export const TARGET_RUNS_PER_SEC = 500;

/** Where the throughput table goes. */
export const RUNS_SECTION: SectionPlace = { heading: '## Runs', name: 'runs' };

/** Where `--redis-cluster` puts its tables. */
export const CLUSTER_SECTION: SectionPlace = { heading: '## Redis Cluster', name: 'redis-cluster-runs', writer: 'npm run bench:runs -- --redis-cluster' };

/** The results table, one row per configuration. */
export function table(rows: Measurement[]): string {
  const lines = [
    '| workers | concurrency / worker | runs/s | p50 ms | p99 ms | POSTs accepted/s | peak backlog | CPU ms/run: api · workers · redis · bench | CPU ceiling runs/s | our CPU share | load avg |',
    '|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|',
  ];
  const cores = cpus().length;
  for (const { workers, concurrency, batch, cpuMsPerRun: cpu, cpuShare, loadAvg } of rows) {
    const l = batch.latenciesMs;
    const failed = batch.failed;
    lines.push(
      `| ${workers} | ${concurrency} | ${fixed(batch.runsPerSec, 0)}${failed ? ` (${failed} runs failed)` : ''} | ` +
        `${fixed(percentile(l, 50), 0)} | ${fixed(percentile(l, 99), 0)} | ` +
        `${fixed(batch.acceptedPerSec, 0)} | ${batch.peakBacklog} | ` +
        `${fixed(cpu.api, 2)} · ${fixed(cpu.workers, 2)} · ${fixed(cpu.redis, 2)} · ${fixed(cpu.bench, 2)} | ` +
        `${fixed((cores * 1000) / (cpu.api + cpu.workers + cpu.redis), 0)} | ${fixed(cpuShare * 100, 0)} % | ${fixed(loadAvg, 1)} |`,
    );
  }
  return lines.join('\n');
}

export function verdict(rows: Measurement[]): string {
  const two = rows.filter((r) => r.workers === 2).sort((a, b) => b.batch.runsPerSec - a.batch.runsPerSec)[0];
  if (!two) return `Target ${TARGET_RUNS_PER_SEC} runs/s with 2 workers: not measured (no 2-worker configuration).`;
  const met = two.batch.runsPerSec >= TARGET_RUNS_PER_SEC;
  return (
    `Target ${TARGET_RUNS_PER_SEC} runs/s with 2 workers: **${met ? 'met' : 'not met'}** ` +
    `(best 2-worker configuration: ${fixed(two.batch.runsPerSec, 0)} runs/s, ` +
    `${fixed((two.batch.runsPerSec / TARGET_RUNS_PER_SEC) * 100, 0)} % of the target).`
  );
}

/** Redis commands per run of a configuration, with the most frequent commands. */
export function commandsLine(row: Measurement): string {
  const total = row.callsPerRun.reduce((sum, [, n]) => sum + n, 0);
  const top = row.callsPerRun.filter(([, n]) => n >= 0.05).map(([name, n]) => `${name} ${fixed(n, 1)}`).join(', ');
  return (
    `Redis commands per run (${row.workers} worker${row.workers > 1 ? 's' : ''} × ${row.concurrency}, INFO commandstats, ` +
    `commands run inside Lua scripts included): ${fixed(total, 1)} — ${top}.`
  );
}

/** The generated part of the `## Runs` section. */
export function generated(
  rows: Measurement[],
  m: Machine,
  command: string,
  source: string,
  options: { runs: number; warmup: number; clients: number; repeats: number; lightRuns: number; lightClients: number[] },
): string {
  const spread = rows
    .filter((r) => r.passes.length > 1)
    .map((r) => `${r.workers}w×${r.concurrency}: ${r.passes.map((p) => fixed(p, 0)).join(' / ')}`)
    .join('; ');
  const best = [...rows].sort((a, b) => b.batch.runsPerSec - a.batch.runsPerSec)[0];
  return generatedBlock(RUNS_SECTION, [
    commandLine(command, source),
    '',
    `Machine: ${describeMachine(m)}, Redis ${m.redis}; the benchmark, ` +
      'redis-server, one API process and the workers all share these cores.',
    '',
    `Each configuration: ${options.warmup} warm-up runs, then ${options.runs} echo runs (2 nodes) fired by at most ` +
      `${options.clients} concurrent POST /api/runs clients; latency is POST sent → the run's \`completed\` event ` +
      'received on the Redis pub/sub channel; runs/s is finished runs over first POST → last completion. ' +
      'The POSTs outrun the workers, so that latency includes the time a run waits in the queue (see peak backlog) and ' +
      'grows with the batch. ' +
      '*CPU ceiling* = cores × 1000 / (API + workers + Redis CPU ms per run): the runs/s these processes would reach ' +
      'with the cores to themselves and no other limit; *our CPU share* = CPU used by the benchmark\'s processes ' +
      '(bench included) / (elapsed × cores); *load avg* = 1-minute load average when the batch started — ' +
      'the gap to 100 % is other work on this shared machine or waiting.' +
      (options.repeats > 1 ? ` Median pass of ${options.repeats} by runs/s (all passes: ${spread}).` : ''),
    '',
    table(rows),
    '',
    verdict(rows),
    '',
    ...(best ? [commandsLine(best)] : []),
    '',
    `*Light load* (after each configuration's batch, same processes): ${options.lightRuns} runs by ${options.lightClients.join(' and then by ')} ` +
      'clients that each wait for their run to end before the next POST, so no run waits in a queue: the latency of one run through ' +
      'API, queue and worker, and what a run costs where nothing is batched (every round trip and per-command cost shows). ' +
      'Redis commands per run from INFO commandstats, script-inner ones included.',
    '',
    lightTable(rows.flatMap((r) => r.light)),
  ]);
}

/** The generated runs part of the `## Redis Cluster` section: the same table on each Redis, measured one after the other. */
export function clusterSection(
  results: { name: string; rows: Measurement[] }[],
  m: Machine,
  command: string,
  source: string,
  options: { runs: number; warmup: number; clients: number; repeats: number },
): string {
  const best = (rows: Measurement[]) => [...rows].sort((a, b) => b.batch.runsPerSec - a.batch.runsPerSec)[0];
  const [single, cluster] = results.map((r) => best(r.rows));
  return generatedBlock(CLUSTER_SECTION, [
    commandLine(command, source),
    '',
    `Machine: ${describeMachine(m)}, Redis ${m.redis}; the benchmark, the Redis ` +
      'processes (one, or six), one API process and the workers all share these cores. Each Redis measured after the other ' +
      `in the same run, the same configurations as \`## Runs\`: ${options.warmup} warm-up runs, then ${options.runs} echo runs ` +
      `by at most ${options.clients} POST clients${options.repeats > 1 ? `, median of ${options.repeats} passes` : ''}; the cluster's ` +
      'CPU column is all six servers (replicas replicate every write).',
    ...results.flatMap(({ name, rows }) => ['', `On ${name}:`, '', table(rows)]),
    ...(single && cluster
      ? [
          '',
          `Best configuration: ${fixed(single.batch.runsPerSec, 0)} runs/s on one server, ${fixed(cluster.batch.runsPerSec, 0)} on the ` +
            `cluster (${fixed((cluster.batch.runsPerSec / single.batch.runsPerSec) * 100, 0)} %); light-load p50 (${lightest(single).clients} clients) ` +
            `${fixed(percentile(lightest(single).batch.latenciesMs, 50), 1)} ms vs ${fixed(percentile(lightest(cluster).batch.latenciesMs, 50), 1)} ms.`,
        ]
      : []),
  ]);
}

/** The light-load batch with the most clients (the one the cluster section compares). */
const lightest = (row: Measurement): LightMeasurement => row.light.at(-1)!;
