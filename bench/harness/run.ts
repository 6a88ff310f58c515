import { startNodeProcess, startRedisServer, type BenchChild, type NodeProcessOptions } from './processes.js';
import { startBenchRedis, type BenchRedis } from './redis.js';
import type { ProcessGroups } from './stats.js';

/** What every API and worker process of a benchmark is started with, beside where Redis is. */
export const STACK_ENV = { SERVICE_KEY_PREFIX: 'agentplane', LOG_LEVEL: 'warn', SERVICE_SHUTDOWN_DELAY_MS: '0' } as const;

/** An API process and its workers: where to send requests, whose CPU counts. */
export interface Stack {
  api: BenchChild;
  workers: BenchChild[];
  groups: ProcessGroups;
  /** Stops the API and the workers (not the Redis they use); resolves with their exit codes. */
  stop(): Promise<(number | null)[]>;
}

export interface StackOptions {
  /** Where the processes keep their data; without it one API process without REDIS_URL executes the runs itself (embedded, no workers). */
  redis?: BenchRedis;
  /** Settings of every process. */
  env: Record<string, string>;
  /** Settings of the API process alone. */
  apiEnv?: Record<string, string>;
  /** Settings of the worker processes alone. */
  workerEnv?: Record<string, string>;
  /** Worker processes beside the API (Redis only). */
  workers: number;
  /** @defaultValue `api` (embedded: `api (embedded)`) */
  apiName?: string;
  /** @defaultValue `worker <i>/<count>` */
  workerName?: (i: number, count: number) => string;
  /** Node flags of the API and the workers (`--cpu-prof`, …). */
  nodeArgs?: string[];
}

/**
 * Every process a benchmark starts, by pid: child processes (API, workers, servers of its own)
 * and Redis backends, all stopped by {@link BenchProcesses.stopAll} whatever happened.
 */
export class BenchProcesses {
  /** The name of each process started, by pid (CPU profiles are named by pid). */
  readonly names = new Map<number, string>();
  private readonly children: BenchChild[] = [];
  private readonly backends: BenchRedis[] = [];

  /** `node --import tsx <entry>`, once its `/health/ready` answers. */
  async node(options: NodeProcessOptions): Promise<BenchChild> {
    return this.track(await startNodeProcess(options));
  }

  /** A private redis-server, as a process. */
  async redisServer(): Promise<BenchChild> {
    return this.track(await startRedisServer());
  }

  /** A private redis-server or a Redis Cluster of six, with clients of the benchmark's own. */
  async redis(cluster = false): Promise<BenchRedis> {
    const redis = await startBenchRedis(cluster);
    this.backends.push(redis);
    return redis;
  }

  /** The API (first) and the worker processes (together) of one set-up. */
  async stack(o: StackOptions): Promise<Stack> {
    const where = o.redis ? o.redis.env : { REDIS_URL: '' };
    const env = { ...where, ...o.env };
    const nodeArgs = o.nodeArgs ?? [];
    const api = await this.node({ name: o.apiName ?? (o.redis ? 'api' : 'api (embedded)'), entry: 'src/main/api.ts', portVariable: 'SERVICE_PORT', env: { ...env, ...o.apiEnv }, nodeArgs });
    const count = o.redis ? o.workers : 0;
    const workers = await this.workers(count, { ...env, ...o.workerEnv }, nodeArgs, o.workerName);
    return {
      api,
      workers,
      groups: { api: [api.pid], workers: workers.map((w) => w.pid), redis: o.redis?.pids() ?? [] },
      stop: () => Promise.all([api, ...workers].map((c) => c.stop())),
    };
  }

  /** `count` worker processes started together (`src/main/worker.ts`). */
  workers(count: number, env: Record<string, string>, nodeArgs: string[] = [], name = (i: number, n: number) => `worker ${i + 1}/${n}`): Promise<BenchChild[]> {
    return Promise.all(
      Array.from({ length: count }, (_, i) => this.node({ name: name(i, count), entry: 'src/main/worker.ts', portVariable: 'WORKER_PORT', env, nodeArgs })),
    );
  }

  /** Stops every process started, the last first, then every Redis; safe to call twice. */
  async stopAll(): Promise<void> {
    for (const child of this.children.splice(0).reverse()) await child.stop();
    for (const redis of this.backends.splice(0)) await redis.stop();
  }

  private track(child: BenchChild): BenchChild {
    this.children.push(child);
    this.names.set(child.pid, child.name);
    return child;
  }
}

/**
 * Runs a benchmark's `body`, then stops every process it started whatever happened; past
 * `limitSec` the whole process exits (2) and takes its children with it. An error is printed
 * and sets exit code 1. Should a handle linger (a socket in close), the benchmark still ends.
 */
export async function runBench(name: string, limitSec: number, body: (processes: BenchProcesses) => Promise<void>): Promise<void> {
  const watchdog = setTimeout(() => {
    console.error(`${name}: stopped after ${limitSec} s; every process it started is killed.`);
    process.exit(2);
  }, limitSec * 1000);
  const processes = new BenchProcesses();
  try {
    await body(processes);
  } catch (error) {
    console.error(error);
    process.exitCode = 1;
  } finally {
    await processes.stopAll();
    clearTimeout(watchdog);
  }
  setTimeout(() => process.exit(), 2000).unref();
}
