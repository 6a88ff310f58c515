import { afterAll, beforeAll, describe, expect } from 'vitest';
import agents from '../fixtures/agents.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startProcess, type AgentProcess } from '../support/processes.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis.js';
import type { RunHarness } from './scenarios.js';

/**
 * A worker process on Redis and the API's key prefix, with the test agents. `redis` is a URL,
 * or the variables of a cluster or Sentinel set (REDIS_CLUSTER_NODES, REDIS_SENTINELS, …).
 */
export function startRunWorker(redis: string | Record<string, string>, app: TestApi, extra: Record<string, string> = {}, port?: number): Promise<AgentProcess> {
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

export function harnessOf(app: TestApi): RunHarness {
  return { url: app.url, store: app.backend.store, events: app.backend.events };
}

/**
 * Registers `scenarios` twice: on the embedded backend (memory adapters, runs executed in the
 * API process), and on a private Redis with the API in this process and two worker processes,
 * which must exit 0 when stopped.
 */
export function onBothBackends(scenarios: (name: string, harness: () => RunHarness) => void): void {
  describe('embedded backend', () => {
    let app: TestApi;
    beforeAll(async () => {
      app = await startTestApi({ agents: new AgentRegistry(agents) });
    });
    afterAll(async () => {
      await app?.close();
    });
    scenarios('embedded (memory adapters, in-process execution)', () => ({ ...harnessOf(app), slots: app.config.WORKER_CONCURRENCY }));
  });

  describe('Redis backend with two worker processes', () => {
    let redis: PrivateRedis;
    let app: TestApi;
    let workers: AgentProcess[] = [];
    beforeAll(async () => {
      redis = await startPrivateRedis();
      app = await startTestApi({ redisUrl: redis.url, agents: new AgentRegistry(agents) });
      workers = await Promise.all([startRunWorker(redis.url, app), startRunWorker(redis.url, app)]);
    });
    afterAll(async () => {
      const codes = await Promise.all(workers.map((w) => w.stop()));
      await app?.close();
      await redis?.stop();
      expect(codes).toEqual([0, 0]);
    });
    // Each worker runs WORKER_CONCURRENCY (default 8) jobs at once.
    scenarios('Redis, API → BullMQ → worker processes', () => ({ ...harnessOf(app), slots: workers.length * app.config.WORKER_CONCURRENCY }));
  });
}
