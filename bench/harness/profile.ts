import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: CpuProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Where a sampled function lives: a package, one of our files, or a Node/V8 pseudo-frame. */
function area(url: string, functionName: string): string {
  if (!url) return functionName || '(anonymous)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  const ours = /\/((?:src|workers|bench|examples)\/.*)$/.exec(url);
  return ours ? ours[1]! : url;
}

/** Microseconds on the monotonic clock, the clock of `.cpuprofile` timestamps. */
export const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

/**
 * Self time by function and by area of one `.cpuprofile`, idle excluded, counting only samples
 * inside `windows` (monotonic µs: the measured batches, not start-up), as text lines.
 */
export function summarizeProfile(path: string, windows: [number, number][], top = 15, within = 'the measured batches'): string[] {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const fn = new Map<string, number>();
  const areas = new Map<string, number>();
  let busyUs = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)?.callFrame;
    const us = profile.timeDeltas[i] ?? 0;
    at += us;
    if (!windows.some(([from, to]) => at >= from && at <= to)) return;
    if (!frame || frame.functionName === '(idle)') return;
    busyUs += us;
    const where = area(frame.url, frame.functionName);
    const key = `${frame.functionName || '(anonymous)'}  ${where}${frame.url ? `:${frame.lineNumber + 1}` : ''}`;
    fn.set(key, (fn.get(key) ?? 0) + us);
    areas.set(where, (areas.get(where) ?? 0) + us);
  });
  const pct = (us: number) => `${((us / busyUs) * 100).toFixed(1).padStart(5)} %`;
  const rank = (m: Map<string, number>, n: number) =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, us]) => `  ${pct(us)}  ${k}`);
  return [
    `busy ${(busyUs / 1e6).toFixed(2)} s in ${within} (idle excluded)`,
    'self time by area:',
    ...rank(areas, 12),
    'self time by function:',
    ...rank(fn, top),
  ];
}

/**
 * The main-thread `.cpuprofile` files in `dir` (`CPU.<date>.<time>.<pid>.<thread>.<seq>`; tsx's
 * loader thread is left out), named by the process whose pid is in the file name.
 */
export function profilesIn(dir: string, names: Map<number, string>): { name: string; path: string }[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile') && f.split('.')[4] === '0')
    .map((f) => {
      const pid = Number(f.split('.')[3]);
      return { name: names.get(pid) ?? `pid ${pid}`, path: join(dir, f) };
    });
}

/** Addresses of the clients connected now (to tell the API's connections from the workers'). */
export async function clientAddresses(redis: Redis): Promise<Map<string, string>> {
  const list = (await redis.client('LIST')) as string;
  const out = new Map<string, string>();
  for (const line of list.split('\n')) {
    const addr = /\baddr=(\S+)/.exec(line)?.[1];
    if (addr) out.set(addr, /\bname=(\S*)/.exec(line)?.[1] ?? '');
  }
  return out;
}

/**
 * Counts the commands Redis receives while `work` runs, with MONITOR, per role and command.
 * `roleOf` gets the client address, or `lua` for commands run inside scripts.
 * MONITOR slows Redis down: never use it inside a timed batch.
 */
export async function countCommands(
  url: string,
  roleOf: (source: string) => string,
  work: () => Promise<number>,
): Promise<{ runs: number; perRole: Map<string, Map<string, number>> }> {
  const client = new Redis(url, { lazyConnect: true });
  client.on('error', () => {});
  await client.connect();
  const monitor = await client.monitor();
  const perRole = new Map<string, Map<string, number>>();
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    const role = roleOf(source);
    const counts = perRole.get(role) ?? new Map<string, number>();
    perRole.set(role, counts);
    const name = String(args[0]).toLowerCase();
    counts.set(name, (counts.get(name) ?? 0) + 1);
  });
  try {
    const runs = await work();
    // Let the last commands of the batch (BullMQ's job completion) reach the monitor.
    await new Promise((r) => setTimeout(r, 300));
    return { runs, perRole };
  } finally {
    monitor.disconnect();
    client.disconnect();
  }
}

/** Text lines: commands per run for each role. */
export function commandLines(runs: number, perRole: Map<string, Map<string, number>>): string[] {
  const lines: string[] = [];
  for (const [role, counts] of [...perRole].sort()) {
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    const top = [...counts].sort((a, b) => b[1] - a[1]).map(([name, n]) => `${name} ${(n / runs).toFixed(2)}`);
    lines.push(`${role}: ${(total / runs).toFixed(1)} commands/run — ${top.join(', ')}`);
  }
  return lines;
}
