import { afterAll, beforeAll, expect, it } from 'vitest';
import { ensureBuilt } from '../support/build.js';
import { freePort, startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { runCli, startServer, type CliProcess } from './cli.js';

/** `agentplane api`, `worker` and `webhooks` on one Redis: the programs of the server commands. */
let redis: TestRedis;
const servers: CliProcess[] = [];

beforeAll(async () => {
  await ensureBuilt();
  redis = await startRedis();
}, 300_000);
afterAll(async () => {
  const codes = await Promise.all(servers.map((server) => server.stop()));
  await redis?.stop();
  expect(codes.every((code) => code === 0), `exit codes ${codes.join(', ')}`).toBe(true);
});

it('api enqueues on Redis, worker executes, webhooks serves its probes; all three stop with exit 0 on SIGTERM', async () => {
  const shared = { REDIS_URL: redis.url, SERVICE_KEY_PREFIX: uniquePrefix('cli') };
  const [apiPort, workerPort, webhookPort] = await Promise.all([freePort(), freePort(), freePort()]);
  const started = await Promise.all([
    startServer(['api', '--port', String(apiPort)], apiPort, shared),
    startServer(['worker'], workerPort, { ...shared, WORKER_PORT: String(workerPort) }),
    startServer(['webhooks'], webhookPort, { ...shared, WEBHOOK_PORT: String(webhookPort), WEBHOOK_HOST: '127.0.0.1', WEBHOOK_SECRET: 'cli-test-secret' }),
  ]);
  servers.push(...started);

  // The API process runs nothing itself on Redis: a completed run is the worker's work.
  const waited = await runCli(['runs', 'start', 'echo', '--input', '{"text":"redis"}', '--wait', '--json', '--url', `http://127.0.0.1:${apiPort}`]);
  expect(waited).toMatchObject({ code: 0, stderr: '' });
  expect(JSON.parse(waited.stdout)).toMatchObject({ status: 'completed', state: { text: 'redis', echoed: true } });
});
