import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { freePort } from './redis.js';

/** The repository root: entries are resolved against it and processes run in it. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** One line a process wrote. `json` is set when the line is a JSON object (pino's format). */
export interface LogLine {
  stream: 'stdout' | 'stderr';
  text: string;
  json?: Record<string, unknown>;
}

export interface StartProcessOptions {
  /** Entry module relative to {@link StartProcessOptions.cwd}, e.g. `src/main/api.ts`, `src/main/worker.ts`. */
  entry: string;
  /** Arguments after the entry, e.g. a CLI command: `['dev', '--watch']`. @defaultValue none */
  args?: readonly string[];
  /** Working directory of the process. @defaultValue the repository root */
  cwd?: string;
  /**
   * Run the entry with plain `node`, without tsx (compiled JavaScript only; NODE_OPTIONS is
   * cleared so that nothing loads it). @defaultValue false
   */
  plainNode?: boolean;
  /**
   * Merged over this process's environment; a value of `undefined` removes the variable
   * (e.g. `{ REDIS_URL: undefined }` for the embedded mode).
   */
  env?: Record<string, string | undefined>;
  /**
   * The variable that carries the listen port, set to {@link StartProcessOptions.port}.
   * @defaultValue `SERVICE_PORT`
   */
  portVariable?: string;
  /** Listen port. @defaultValue a free loopback port from {@link freePort} */
  port?: number;
  /**
   * When the process counts as started: `'http'` waits for `GET /health/ready` to answer 200,
   * a predicate waits for a matching output line, `'spawned'` does not wait.
   * @defaultValue `'http'`
   */
  ready?: 'http' | 'spawned' | ((line: LogLine) => boolean);
  /**
   * Bound for `ready`; past it the process is killed and startProcess rejects. Wide: tsx
   * compiles the sources at start, which takes 20 s and more on a loaded 2-core CI machine.
   * @defaultValue 90000
   */
  readyTimeoutMs?: number;
}

/** A running agentplane process started by {@link startProcess}. */
export interface AgentProcess {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  pid: number;
  /** Every line written so far, stdout and stderr interleaved in arrival order. */
  lines: LogLine[];
  /** Resolves with the first line (already written or future) matching `predicate`; rejects after `timeoutMs` or when the process exits first. */
  waitForLine(predicate: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** Sends a signal; a no-op once the process has exited. */
  signal(signal: NodeJS.Signals): void;
  /** Resolves with the exit code once the process has exited (null when a signal killed it). */
  exited: Promise<number | null>;
  /**
   * SIGTERM, then SIGKILL if it has not exited within `timeoutMs`. Resolves with the exit code.
   * Safe to call twice and after the process exited by itself.
   * @defaultValue timeoutMs 15000
   */
  stop(timeoutMs?: number): Promise<number | null>;
}

const running = new Set<ChildProcess>();

// Leftovers of a failed test die with the test file, and with the test worker at the latest.
afterAll(stopAllProcesses);
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Kills (SIGKILL) every process started by this module that is still running. */
export async function stopAllProcesses(): Promise<void> {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('close', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

/**
 * Spawns `node --import tsx <entry>` (or plain `node`) in the repository root (or `cwd`) on a free port, captures its
 * output line by line, and resolves once it is ready (see {@link StartProcessOptions.ready}).
 * If it exits or does not become ready in time, it is killed and the promise rejects with
 * the last lines it wrote.
 */
export async function startProcess(options: StartProcessOptions): Promise<AgentProcess> {
  // A free port can be taken by a process of another test file between freePort() and the
  // bind: then the process says so and exits, and it is started again on another free port.
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startProcessOnce(options);
    } catch (error) {
      const taken = /is already in use/.test(String((error as Error).message));
      if (!taken || options.port !== undefined || attempt === 3) throw error;
    }
  }
}

async function startProcessOnce(options: StartProcessOptions): Promise<AgentProcess> {
  const port = options.port ?? (await freePort());
  const env: NodeJS.ProcessEnv = { ...process.env, SERVICE_HOST: '127.0.0.1' };
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  env[options.portVariable ?? 'SERVICE_PORT'] = String(port);
  if (options.plainNode) delete env.NODE_OPTIONS;

  const args = [...(options.plainNode ? [options.entry] : ['--import', 'tsx', options.entry]), ...(options.args ?? [])];
  const child = spawn(process.execPath, args, { cwd: options.cwd ?? ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  // 'close' rather than 'exit': it comes after stdout and stderr ended, so every line is in `lines`.
  const exited = new Promise<number | null>((resolve) => {
    child.once('close', (code) => {
      running.delete(child);
      resolve(code);
    });
  });
  let hasExited = false;
  void exited.then(() => (hasExited = true));

  const lines: LogLine[] = [];
  const waiters = new Set<(line: LogLine) => void>();
  for (const stream of ['stdout', 'stderr'] as const) {
    createInterface({ input: child[stream]! }).on('line', (text) => {
      const line: LogLine = { stream, text, json: parseJsonObject(text) };
      lines.push(line);
      for (const waiter of waiters) waiter(line);
    });
  }

  const tail = () => lines.slice(-20).map((l) => l.text).join('\n');
  const waitForLine = (predicate: (line: LogLine) => boolean, timeoutMs = 10_000): Promise<LogLine> => {
    const found = lines.find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const done = (error?: Error, line?: LogLine) => {
        clearTimeout(timer);
        waiters.delete(waiter);
        if (error) reject(error);
        else resolve(line!);
      };
      const waiter = (line: LogLine) => {
        if (predicate(line)) done(undefined, line);
      };
      const timer = setTimeout(() => done(new Error(`${options.entry}: no matching line within ${timeoutMs} ms; last lines:\n${tail()}`)), timeoutMs);
      waiters.add(waiter);
      void exited.then(() => done(new Error(`${options.entry} exited before a matching line; last lines:\n${tail()}`)));
    });
  };

  const url = `http://127.0.0.1:${port}`;
  const signal = (sig: NodeJS.Signals) => {
    if (!hasExited) child.kill(sig);
  };
  let stopping: Promise<number | null> | undefined;
  const stop = (timeoutMs = 15_000) =>
    (stopping ??= (async () => {
      signal('SIGTERM');
      const timer = setTimeout(() => signal('SIGKILL'), timeoutMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    })());

  const started: AgentProcess = { url, port, pid: child.pid!, lines, waitForLine, signal, exited, stop };
  const ready = options.ready ?? 'http';
  const readyTimeoutMs = options.readyTimeoutMs ?? 90_000;
  try {
    if (ready === 'http') await waitForReady(url, exited, readyTimeoutMs);
    else if (typeof ready === 'function') await waitForLine(ready, readyTimeoutMs);
  } catch (error) {
    signal('SIGKILL');
    await exited;
    throw new Error(`${options.entry} did not become ready: ${(error as Error).message}\n${tail()}`, { cause: error });
  }
  return started;
}

/** Polls /health/ready until it answers 200; fails when the process exits or the deadline passes. */
async function waitForReady(url: string, exited: Promise<number | null>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitCode: number | null | undefined;
  void exited.then((code) => (exitCode = code));
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (exitCode !== undefined) throw new Error(`exited with code ${exitCode}`);
    try {
      const response = await fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(1000) });
      if (response.status === 200) return;
      last = `status ${response.status}: ${await response.text()}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`GET ${url}/health/ready not 200 within ${timeoutMs} ms (${last})`);
}

function parseJsonObject(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
