import { afterAll, beforeAll, expect } from 'vitest';
import agents from '../fixtures/agents.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { startTestApi, type TestApi } from './app.js';
import { startProcess, type AgentProcess } from './processes.js';

/** A Redis for run workers: a URL, or the variables of a cluster or Sentinel set (REDIS_CLUSTER_NODES, REDIS_SENTINELS, …). */
export type RedisTarget = string | Record<string, string>;

/**
 * A worker process on Redis and the API's key prefix, with the test agents
 * (test/fixtures/agents.ts). `extra` is merged over its environment.
 */
export function startRunWorker(redis: RedisTarget, app: TestApi, extra: Record<string, string> = {}, port?: number): Promise<AgentProcess> {
  return startProcess({
    entry: 'src/main/worker.ts',
    portVariable: 'WORKER_PORT',
    ...(port ? { port } : {}),
    env: {
      ...(typeof redis === 'string' ? { REDIS_URL: redis } : { REDIS_URL: undefined, ...redis }),
      SERVICE_KEY_PREFIX: app.config.SERVICE_KEY_PREFIX,
      AGENTS_MODULE: 'test/fixtures/agents.ts',
      WORKER_STALLED_INTERVAL_MS: '2000',
      LOG_LEVEL: 'info',
      ...extra,
    },
  });
}

/**
 * Bound of the hooks that start and stop worker processes: tsx compiles the sources at each
 * start, which takes a minute on a loaded 2-core machine.
 */
const START_MS = 180_000;

export interface ApiWithWorkersOptions {
  /** Worker processes. @defaultValue 2 */
  workers?: number;
  /** Extra environment of every worker. */
  workerEnv?: Record<string, string>;
}

/** The API and workers of {@link useApiWithWorkers}, set once its beforeAll has run. */
export interface ApiWithWorkers {
  readonly app: TestApi;
  readonly workers: AgentProcess[];
}

/**
 * Registers the block the run tests share: before all tests of the enclosing suite, an API in
 * this process with the test agents on `redis()` (a fresh key prefix) and two worker
 * processes on it; after them, the workers are stopped (each must exit 0) and the API closed.
 * `redis` is called in beforeAll, so a Redis started by an earlier beforeAll can be named.
 */
export function useApiWithWorkers(redis: () => RedisTarget, options: ApiWithWorkersOptions = {}): ApiWithWorkers {
  let app: TestApi | undefined;
  let workers: AgentProcess[] = [];
  beforeAll(async () => {
    const target = redis();
    app = await startTestApi({ ...(typeof target === 'string' ? { redisUrl: target } : { env: target }), agents: new AgentRegistry(agents) });
    workers = await Promise.all(Array.from({ length: options.workers ?? 2 }, () => startRunWorker(target, app!, options.workerEnv)));
  }, START_MS);
  afterAll(async () => {
    const codes = await Promise.all(workers.map((w) => w.stop()));
    await app?.close();
    expect(codes).toEqual(workers.map(() => 0));
  }, START_MS);
  return {
    get app() {
      if (!app) throw new Error('useApiWithWorkers(): the API is only there inside tests and hooks.');
      return app;
    },
    get workers() {
      return workers;
    },
  };
}
