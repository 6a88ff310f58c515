import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { masters, type RedisClient } from '../../src/adapters/redis/connection.js';

const CLOCK_TICKS_PER_SEC = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU time (user + system) a process used so far, in ms; NaN where /proc is not readable. */
export function cpuMs(pid: number): number {
  if (pid === process.pid) {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1000;
  }
  try {
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SEC) * 1000;
  } catch {
    return NaN;
  }
}

/** Process ids by role (a stack's API, workers and Redis servers; `bench`: the benchmark's own), for CPU per run. */
export interface ProcessGroups {
  api: number[];
  workers: number[];
  redis: number[];
  bench?: number[];
}

/** CPU ms used so far by each group, summed over its processes (NaN for a group without any). */
export function cpuSnapshot<K extends string>(groups: Partial<Record<K, number[]>>): Record<K, number> {
  const sum = (pids: number[] = []) => (pids.length === 0 ? NaN : pids.reduce((s, pid) => s + cpuMs(pid), 0));
  return Object.fromEntries(Object.entries<number[] | undefined>(groups).map(([role, pids]) => [role, sum(pids)])) as Record<K, number>;
}

/** CPU ms per unit of work (run, request) of each group between two snapshots. */
export function cpuPer<K extends string>(before: Record<K, number>, after: Record<K, number>, units: number): Record<K, number> {
  return Object.fromEntries(Object.keys(after).map((role) => [role, (after[role as K] - before[role as K]) / units])) as Record<K, number>;
}

/** Calls per command from INFO commandstats (commands run inside Lua scripts included), summed over a cluster's masters. */
export async function commandCalls(redis: RedisClient): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const node of masters(redis)) {
    const text = await node.info('commandstats');
    for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(match[1]!, (calls.get(match[1]!) ?? 0) + Number(match[2]));
  }
  return calls;
}

/** Per-run command counts between two commandstats snapshots, most frequent first. */
export function callsPerRun(before: Map<string, number>, after: Map<string, number>, runs: number): [string, number][] {
  const out: [string, number][] = [];
  for (const [name, calls] of after) {
    const delta = calls - (before.get(name) ?? 0);
    if (delta > 0) out.push([name, delta / runs]);
  }
  return out.sort((a, b) => b[1] - a[1]);
}

/** The `p`-th percentile of an ascending list (nearest rank); NaN when empty. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** `n` with `digits` decimals, `n/a` when not a finite number (not measured). */
export const fixed = (n: number, digits = 1): string => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
