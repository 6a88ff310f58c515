import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll } from 'vitest';
import { ROOT } from '../support/build.js';
import { freePort } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/** The compiled bin (`agentplane` in package.json); call ensureBuilt() first. */
export const CLI = join(ROOT, 'dist/src/cli/main.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A running `node dist/src/cli/main.js …`. */
export interface CliProcess {
  stdout: string[];
  stderr: string[];
  /** Resolves with the first line of `stream` (already written or future) matching `pattern`. */
  waitForLine(stream: 'stdout' | 'stderr', pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves once the process has exited, with everything it wrote. */
  exited: Promise<CliResult>;
  /** SIGTERM, SIGKILL after `timeoutMs`; resolves with the exit code. */
  stop(timeoutMs?: number): Promise<number | null>;
}

const running = new Set<ChildProcess>();
afterAll(() => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * The environment of a CLI process: this one's without agentplane settings (so a developer's
 * AGENTPLANE_URL or REDIS_URL does not leak in), logs at warn, plus `env`.
 */
function environment(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(AGENTPLANE_|SERVICE_|REDIS_URL$|WORKER_|RUN_)/.test(name)));
  const merged: NodeJS.ProcessEnv = { ...base, LOG_LEVEL: 'warn' };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete merged[name];
    else merged[name] = value;
  }
  return merged;
}

export function spawnCli(args: readonly string[], env: Record<string, string | undefined> = {}): CliProcess {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: environment(env), stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  const lines = { stdout: [] as string[], stderr: [] as string[] };
  for (const stream of ['stdout', 'stderr'] as const) createInterface({ input: child[stream] }).on('line', (line) => lines[stream].push(line));
  const exited = new Promise<CliResult>((resolve) => {
    child.once('close', (code) => {
      running.delete(child);
      resolve({ code, stdout: lines.stdout.map((l) => `${l}\n`).join(''), stderr: lines.stderr.map((l) => `${l}\n`).join('') });
    });
  });
  let done = false;
  void exited.then(() => (done = true));
  return {
    ...lines,
    exited,
    waitForLine: (stream, pattern, timeoutMs = 20_000) =>
      waitFor(`a line matching ${pattern} on the ${stream} of agentplane ${args.join(' ')} (${lines.stderr.join(' | ')})`, () => lines[stream].find((l) => pattern.test(l)), timeoutMs),
    stop: async (timeoutMs = 15_000) => {
      if (!done) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      try {
        return (await exited).code;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Runs the CLI to its end (killed past `timeoutMs`, which fails the call). */
export async function runCli(args: readonly string[], env: Record<string, string | undefined> = {}, timeoutMs = 30_000): Promise<CliResult> {
  const cli = spawnCli(args, env);
  const timer = setTimeout(() => void cli.stop(0), timeoutMs);
  const result = await cli.exited;
  clearTimeout(timer);
  if (result.code === null) throw new Error(`agentplane ${args.join(' ')} did not end within ${timeoutMs} ms:\n${result.stderr}`);
  return result;
}

/**
 * A server command (`dev --port N`, `worker`…) whose probes answer on `port`: resolves once
 * `/health/ready` there answers 200, rejects if the process exits first.
 */
export async function startServer(args: readonly string[], port: number, env: Record<string, string | undefined> = {}): Promise<CliProcess> {
  const server = spawnCli(args, { SERVICE_HOST: '127.0.0.1', SERVICE_SHUTDOWN_DELAY_MS: '0', ...env });
  const url = `http://127.0.0.1:${port}/health/ready`;
  const ready = waitFor(`agentplane ${args.join(' ')} to answer ${url}`, async () => (await fetch(url, { signal: AbortSignal.timeout(1_000) })).status === 200, 30_000, 50);
  const exitedFirst = server.exited.then((result) => {
    throw new Error(`agentplane ${args.join(' ')} exited with ${result.code} before it was ready:\n${result.stderr}${result.stdout}`);
  });
  await Promise.race([ready, exitedFirst]);
  return server;
}

/** `agentplane dev` or `agentplane api` on a free loopback port. */
export async function startApi(command: 'dev' | 'api', env: Record<string, string | undefined> = {}): Promise<{ url: string; server: CliProcess }> {
  const port = await freePort();
  return { url: `http://127.0.0.1:${port}`, server: await startServer([command, '--port', String(port)], port, env) };
}
