import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { freePort } from '../../scripts/dev/redis-server.js';

/** The repository root: entries are resolved against it and processes run in it. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A child process this benchmark started and must stop. */
export interface BenchChild {
  name: string;
  pid: number;
  /** `http://127.0.0.1:<port>` of its HTTP listener (redis: `redis://…`). */
  url: string;
  port: number;
  /** The last lines it wrote (bounded), for error messages. */
  tail(): string;
  /** True once the process has exited. */
  exited(): boolean;
  /** SIGTERM, then SIGKILL after `timeoutMs`; resolves with the exit code. Safe to call twice. */
  stop(timeoutMs?: number): Promise<number | null>;
}

const running = new Set<ChildProcess>();

// Whatever happens to the benchmark, nothing it started outlives it.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

function track(name: string, child: ChildProcess, url: string, port: number): BenchChild {
  running.add(child);
  const lines: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream }).on('line', (line) => {
      lines.push(line);
      if (lines.length > 40) lines.shift();
    });
  }
  const exited = new Promise<number | null>((resolve) => {
    child.once('close', (code) => {
      running.delete(child);
      resolve(code);
    });
  });
  let stopping: Promise<number | null> | undefined;
  let hasExited = false;
  void exited.then(() => (hasExited = true));
  return {
    name,
    pid: child.pid!,
    url,
    port,
    tail: () => lines.join('\n'),
    exited: () => hasExited,
    stop: (timeoutMs = 15_000) =>
      (stopping ??= (async () => {
        if (running.has(child)) child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
        try {
          return await exited;
        } finally {
          clearTimeout(timer);
        }
      })()),
  };
}

async function until(what: string, deadlineMs: number, probe: () => Promise<boolean>, child: BenchChild): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    if (await probe().catch(() => false)) return;
    if (child.exited() || Date.now() > deadline) {
      await child.stop(1000);
      throw new Error(`${child.name}: ${what} not reached (exited, or ${deadlineMs} ms passed); last lines:\n${child.tail()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A private redis-server on a free loopback port without persistence (RDB and AOF off). */
export async function startRedisServer(): Promise<BenchChild> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const redis = track('redis-server', child, `redis://127.0.0.1:${port}`, port);
  await until('PING', 10_000, () => ping(port), redis);
  return redis;
}

async function ping(port: number): Promise<boolean> {
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } finally {
    client.disconnect();
  }
}

export interface NodeProcessOptions {
  name: string;
  /** Entry module relative to the repository root. */
  entry: string;
  env: Record<string, string>;
  /** The variable that carries the listen port: `SERVICE_PORT` or `WORKER_PORT`. */
  portVariable: string;
  /** Extra node flags, e.g. `--cpu-prof`. */
  nodeArgs?: string[];
}

/** Spawns `node --import tsx <entry>` and resolves once its `/health/ready` answers 200. */
export async function startNodeProcess(options: NodeProcessOptions): Promise<BenchChild> {
  const port = await freePort();
  const env = { ...process.env, SERVICE_HOST: '127.0.0.1', ...options.env, [options.portVariable]: String(port) };
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), '--import', 'tsx', options.entry], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = `http://127.0.0.1:${port}`;
  const started = track(options.name, child, url, port);
  await until(
    'GET /health/ready 200',
    30_000,
    async () => (await fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(1000) })).status === 200,
    started,
  );
  return started;
}

/**
 * Runs `node [nodeArgs] --import tsx <entry> [args]` in the repository to its end; resolves with
 * what it printed (with `print`, passed through to this process's output instead) and rejects
 * unless it exits 0. Killed with the benchmark, as every child.
 */
export function runNodeScript(entry: string, o: { args?: string[]; env?: Record<string, string>; nodeArgs?: string[]; print?: boolean } = {}): Promise<string> {
  const child = spawn(process.execPath, [...(o.nodeArgs ?? []), '--import', 'tsx', entry, ...(o.args ?? [])], {
    cwd: ROOT,
    env: { ...process.env, ...o.env },
    stdio: ['ignore', o.print ? 'inherit' : 'pipe', 'inherit'],
  });
  running.add(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) =>
    child.once('close', (code) => {
      running.delete(child);
      if (code === 0) resolve(output);
      else reject(new Error(`${entry} exited with ${code}`));
    }),
  );
}
