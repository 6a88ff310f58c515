import { fileURLToPath } from 'node:url';
import type { RedisClient } from '../../src/adapters/redis/connection.js';
import { startNodeProcess, type BenchChild } from '../runs/processes.js';
import { startBenchRedis, type BenchRedis } from '../runs/redis-backend.js';
import { machine, type Machine } from '../runs/report.js';
import { BARE_SERVER_ENTRY } from './bare.js';
import type { Target } from './measure.js';
import type { LangGraphBackend } from './options.js';

/** Serves examples/langgraph/echo.ts as `lg-echo` and human-review.ts as `lg-human-review`: their own ids would replace the native agents. */
const SERVICE_LANGGRAPH_JSON = fileURLToPath(new URL('./langgraph.json', import.meta.url));
const PREFIX = 'agentplane';

/** How many processes a backend runs, and how many jobs each takes. */
export interface StackOptions {
  /** Redis: worker processes beside the API. */
  workers: number;
  /** WORKER_CONCURRENCY (jobs per worker process; embedded: of the API process). */
  concurrency: number;
  /** The API and worker processes write a CPU profile (`--cpu-prof`) into this directory on exit. */
  profileDir?: string;
}

/** One backend's processes, started: where to send requests, and how to stop them. */
export interface Stack {
  target: Target;
  /** Redis: the private redis-server's version. */
  redisVersion?: string;
  stop(): Promise<void>;
}

/**
 * Starts the API (and, on Redis, a private redis-server and worker processes) with the echo
 * graph served as `lg-echo` beside the native `echo`; keeps every process it started so
 * `stopAll` ends them whatever happened (safe to call twice).
 */
export class LangGraphStacks {
  private readonly started: BenchChild[] = [];
  private readonly backends: BenchRedis[] = [];

  async start(backend: LangGraphBackend, o: StackOptions): Promise<Stack> {
    const common = {
      SERVICE_LANGGRAPH_JSON,
      SERVICE_KEY_PREFIX: PREFIX,
      LOG_LEVEL: 'warn',
      SERVICE_SHUTDOWN_DELAY_MS: '0',
      WORKER_CONCURRENCY: String(o.concurrency),
      // Held waits and streams count against the per-caller stream caps (20 by default).
      SERVICE_RATE_LIMIT: 'off',
      SERVICE_SSE_MAX_PER_PRINCIPAL: '0',
      SERVICE_SSE_MAX_PER_TENANT: '0',
    };
    if (backend === 'embedded') {
      const api = await this.child('api (embedded)', 'src/main/api.ts', 'SERVICE_PORT', { ...common, REDIS_URL: '' }, o.profileDir);
      return { target: { backend, apiUrl: api.url, groups: { api: [api.pid], workers: [], redis: [] } }, stop: async () => void (await api.stop()) };
    }
    const redis = await startBenchRedis(false);
    this.backends.push(redis);
    const env = { ...common, ...redis.env };
    const api = await this.child('api', 'src/main/api.ts', 'SERVICE_PORT', env, o.profileDir);
    const workers = await Promise.all(Array.from({ length: o.workers }, (_, i) => this.child(`worker ${i + 1}/${o.workers}`, 'src/main/worker.ts', 'WORKER_PORT', env, o.profileDir)));
    const admin: RedisClient = redis.client('bench:admin');
    const redisVersion = /redis_version:(\S+)/.exec(await admin.info('server'))?.[1] ?? 'unknown';
    return {
      target: { backend, apiUrl: api.url, groups: { api: [api.pid], workers: workers.map((w) => w.pid), redis: redis.pids() }, admin },
      redisVersion,
      stop: async () => {
        await Promise.all([api, ...workers].map((c) => c.stop()));
        await redis.stop();
      },
    };
  }

  /** LangGraph alone behind a bare node:http server (bare-server.ts), in its own process: stopped with the rest. */
  async startBare(): Promise<Target> {
    const bare = await this.child('LangGraph alone (node:http)', BARE_SERVER_ENTRY, 'SERVICE_PORT', {});
    return { backend: 'embedded', apiUrl: bare.url, groups: { api: [bare.pid], workers: [], redis: [] } };
  }

  async stopAll(): Promise<void> {
    for (const child of [...this.started].reverse()) await child.stop();
    for (const redis of this.backends) await redis.stop();
  }

  private async child(name: string, entry: string, portVariable: string, env: Record<string, string>, profileDir?: string): Promise<BenchChild> {
    const nodeArgs = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
    const child = await startNodeProcess({ name, entry, portVariable, env, nodeArgs });
    this.started.push(child);
    return child;
  }
}

/** Starts each backend in turn, runs `measure` on it and stops it; answers the machine the figures come from. */
export async function eachBackend(stacks: LangGraphStacks, backends: LangGraphBackend[], o: StackOptions, measure: (target: Target) => Promise<void>): Promise<Machine> {
  let m: Machine | undefined;
  for (const backend of backends) {
    const { target, redisVersion, stop } = await stacks.start(backend, o);
    try {
      if (!m || redisVersion) m = machine(redisVersion ?? 'n/a');
      await measure(target);
    } finally {
      await stop();
    }
  }
  return m!;
}

/**
 * Runs a benchmark's `body`, then stops every process it started whatever happened; past
 * `limitSec` the whole process exits (2) and takes its children with it. Sets the exit code.
 */
export async function runBench(name: string, limitSec: number, body: (stacks: LangGraphStacks) => Promise<void>): Promise<void> {
  const watchdog = setTimeout(() => {
    console.error(`${name}: stopped after --limit-sec ${limitSec}; every process it started is killed.`);
    process.exit(2);
  }, limitSec * 1000);
  const stacks = new LangGraphStacks();
  let failed = false;
  try {
    await body(stacks);
  } catch (error) {
    failed = true;
    console.error(error);
  } finally {
    await stacks.stopAll();
    clearTimeout(watchdog);
  }
  process.exitCode = failed ? 1 : 0;
  // Should a handle linger (a socket in close), the benchmark still ends by itself.
  setTimeout(() => process.exit(), 2000).unref();
}
