import { afterAll, beforeAll, describe } from 'vitest';
import agents from '../fixtures/agents.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { usePrivateRedis } from '../support/redis.js';
import { useApiWithWorkers } from '../support/workers.js';
import type { RunHarness } from './scenarios.js';

export { startRunWorker } from '../support/workers.js';

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
    const redis = usePrivateRedis();
    const stack = useApiWithWorkers(() => redis.url);
    // Each worker runs WORKER_CONCURRENCY (default 8) jobs at once.
    scenarios('Redis, API → BullMQ → worker processes', () => ({
      ...harnessOf(stack.app),
      slots: stack.workers.length * stack.app.config.WORKER_CONCURRENCY,
    }));
  });
}
