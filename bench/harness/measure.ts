import { loadavg } from 'node:os';
import type { RedisClient } from '../../src/adapters/redis/connection.js';
import { closedLoop } from './client.js';
import { callsPerRun, commandCalls, cpuPer, cpuSnapshot, type ProcessGroups } from './stats.js';

/** The processes a measurement charges: whose CPU counts, and (Redis) the benchmark's client that reads INFO. */
export interface MeasuredProcesses {
  groups: ProcessGroups;
  /** Redis: the benchmark's own connection, for INFO commandstats. */
  admin?: RedisClient;
}

/** One batch of closed-loop calls. Times in ms, lists sorted ascending. */
export interface Measurement {
  /** Measured calls that answered as expected. */
  runs: number;
  /** Measured calls answered otherwise. */
  failed: number;
  /** Completed calls per second over first request → last answer. */
  runsPerSec: number;
  /** Each completed call's latency, as it answered it. */
  latencyMs: number[];
  cpuMsPerRun: { api: number; workers: number; redis: number };
  /** Redis: commands per call (INFO commandstats, commands inside Lua included), most frequent first; empty without `admin`. */
  commandsPerRun: [string, number][];
  /** 1-minute load average when the measured batch started. */
  loadAvg: number;
}

export interface ClosedLoopOptions {
  /** Called between the warm-up and the measured calls: what the caller counts itself starts over there. */
  onMeasureStart?: () => void;
}

/**
 * `warmup` then `runs` calls of `one` by `clients` closed-loop clients (each client's next
 * call after its previous answer), with CPU per call of every group and (with `admin`) Redis
 * commands per call. `one(i)` answers its latency in ms, or why it failed (the first reason
 * is printed).
 */
export async function measureClosedLoop(
  target: MeasuredProcesses,
  clients: number,
  warmup: number,
  runs: number,
  one: (i: number) => Promise<number | string>,
  options: ClosedLoopOptions = {},
): Promise<Measurement> {
  const timeoutMs = Math.max(120_000, runs * 200);
  let latencyMs: number[] = [];
  let failed = 0;
  const loop = (n: number) =>
    closedLoop(clients, n, timeoutMs, async (i) => {
      const outcome = await one(i);
      if (typeof outcome === 'number') latencyMs.push(outcome);
      else if ((failed += 1) === 1) console.error(outcome);
    });
  await loop(warmup);
  latencyMs = [];
  failed = 0;
  options.onMeasureStart?.();
  const loadAvg = loadavg()[0]!;
  const cpuBefore = cpuSnapshot(target.groups);
  const callsBefore = target.admin ? await commandCalls(target.admin) : undefined;
  const elapsedMs = await loop(runs);
  const cpuAfter = cpuSnapshot(target.groups);
  const callsAfter = target.admin ? await commandCalls(target.admin) : undefined;
  const completed = latencyMs.length;
  const cpu = cpuPer(cpuBefore, cpuAfter, completed);
  return {
    runs: completed,
    failed,
    runsPerSec: (completed / elapsedMs) * 1000,
    latencyMs: latencyMs.sort((a, b) => a - b),
    cpuMsPerRun: { api: cpu.api, workers: cpu.workers, redis: cpu.redis },
    // The benchmark's own INFO calls are not the runs'.
    commandsPerRun: callsBefore && callsAfter ? callsPerRun(callsBefore, callsAfter, completed).filter(([name]) => name !== 'info') : [],
    loadAvg,
  };
}
