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
