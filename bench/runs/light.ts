import { loadavg } from 'node:os';
import type { RedisClient } from '../../src/adapters/redis/connection.js';
import { callsPerRun, commandCalls, cpuPer, cpuSnapshot, fixed, percentile, type ProcessGroups } from '../harness/stats.js';
import { fireBatch, type BatchResult, type RunEndWatcher } from './load.js';

/**
 * One light-load batch: `clients` closed-loop clients (each POSTs its next run once the last
 * ended), so no run waits in a queue. Where nothing is batched, every round trip and every
 * per-command cost of the run path shows: the rows that caught a regression the 64-client
 * throughput hid (an auto-pipelined connection pays off there, not here).
 */
export interface LightMeasurement {
  workers: number;
  concurrency: number;
  clients: number;
  batch: BatchResult;
  /** CPU ms per run of each process group over the batch. */
  cpuMsPerRun: { api: number; workers: number; redis: number };
  /** Redis commands per run (INFO commandstats, script-inner ones included), most frequent first. */
  callsPerRun: [string, number][];
  /** 1-minute load average when the batch started. */
  loadAvg: number;
}

export interface LightContext {
  apiUrl: string;
  watcher: RunEndWatcher;
  admin: RedisClient;
  groups: ProcessGroups;
  workers: number;
  concurrency: number;
}

/** Measures `runs` echo runs by `clients` closed-loop clients. */
export async function measureLight(ctx: LightContext, clients: number, runs: number): Promise<LightMeasurement> {
  const { api, workers, redis } = ctx.groups;
  const cpu = () => cpuSnapshot({ api, workers, redis });
  const loadAvg = loadavg()[0]!;
  const cpuBefore = cpu();
  const callsBefore = await commandCalls(ctx.admin);
  const batch = await fireBatch({ apiUrl: ctx.apiUrl, runs, clients, closedLoop: true, watcher: ctx.watcher, timeoutMs: Math.max(60_000, runs * 100) });
  const cpuAfter = cpu();
  const callsAfter = await commandCalls(ctx.admin);
  return {
    workers: ctx.workers,
    concurrency: ctx.concurrency,
    clients,
    batch,
    cpuMsPerRun: cpuPer(cpuBefore, cpuAfter, batch.runs),
    callsPerRun: callsPerRun(callsBefore, callsAfter, batch.runs),
    loadAvg,
  };
}

/** The light-load table: one row per configuration and client count. */
export function lightTable(rows: LightMeasurement[]): string {
  const lines = [
    '| workers | concurrency / worker | clients | runs/s | p50 ms | p99 ms | CPU ms/run: api · workers · redis | CPU ms/run, sum | Redis commands/run | load avg |',
    '|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|',
  ];
  for (const { workers, concurrency, clients, batch, cpuMsPerRun: cpu, callsPerRun: calls, loadAvg } of rows) {
    const failed = batch.failed + batch.rejected;
    const commands = calls.reduce((sum, [, n]) => sum + n, 0);
    lines.push(
      `| ${workers} | ${concurrency} | ${clients} | ${fixed(batch.runsPerSec, 0)}${failed ? ` (${failed} runs failed)` : ''} | ` +
        `${fixed(percentile(batch.latenciesMs, 50), 1)} | ${fixed(percentile(batch.latenciesMs, 99), 1)} | ` +
        `${fixed(cpu.api, 2)} · ${fixed(cpu.workers, 2)} · ${fixed(cpu.redis, 2)} | ${fixed(cpu.api + cpu.workers + cpu.redis, 2)} | ` +
        `${fixed(commands, 1)} | ${fixed(loadAvg, 1)} |`,
    );
  }
  return lines.join('\n');
}
