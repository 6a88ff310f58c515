import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/app.js';
import { startProcess, type AgentProcess } from '../support/processes.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis.js';

/**
 * `promtool check metrics` (Debian's `prometheus`, which .ci/run installs) finds no problem in
 * the API's and the worker's /metrics; a 405 on a known path is labelled with its pattern.
 */
function promtool(text: string): { status: number | null; output: string } {
  const run = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (run.error) throw new Error(`promtool is needed for this test (apt-get install -y prometheus): ${run.error.message}`);
  return { status: run.status, output: `${run.stdout}${run.stderr}`.trim() };
}

describe('metrics lint', () => {
  let redis: PrivateRedis;
  let app: TestApi;
  let worker: AgentProcess;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    app = await startTestApi({ redisUrl: redis.url });
    worker = await startProcess({
      entry: 'src/main/worker.ts',
      portVariable: 'WORKER_PORT',
      env: { REDIS_URL: redis.url, SERVICE_KEY_PREFIX: app.config.SERVICE_KEY_PREFIX, LOG_LEVEL: 'warn' },
    });
  });
  afterAll(async () => {
    await worker?.stop();
    await app?.close();
    await redis?.stop();
  });

  it("the API's /metrics passes promtool, and a 405 is labelled with the route's pattern", async () => {
    expect((await fetch(`${app.url}/api/agents`, { method: 'DELETE' })).status).toBe(405);
    await fetch(`${app.url}/api/sessions?limit=1`);
    const text = await (await fetch(`${app.url}/metrics`)).text();
    expect(text).toMatch(/agentplane_http_requests_total\{method="DELETE",route="\/api\/agents",status="405"\} 1/);
    expect(text).not.toMatch(/nodejs_active_handles_total/);
    expect(promtool(text)).toEqual({ status: 0, output: '' });
  });

  it("the worker's /metrics passes promtool", async () => {
    const text = await (await fetch(`${worker.url}/metrics`)).text();
    expect(text).toMatch(/agentplane_runs_stuck/);
    expect(promtool(text)).toEqual({ status: 0, output: '' });
  });
});
