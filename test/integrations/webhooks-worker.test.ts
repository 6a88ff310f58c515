import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/main/worker-server.js';
import { call, startTestApi } from '../support/app.js';
import { waitFor } from '../support/wait.js';
import { freePort, uniquePrefix, useRedis } from '../support/redis.js';

// `npm run start:webhooks` as a real process (the script is `tsx src/main/webhooks.ts`), with
// an API and a run worker on the same Redis in this process. It runs as `node --import tsx`:
// the tsx command relays SIGTERM to its child and, when the child has not confirmed it within
// 30 ms (a busy CI machine), kills it and exits 143, which would fail the graceful-exit check.

const redis = useRedis();

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

// Each test starts up to four processes one after the other; tsx compiles each one's sources,
// which on a busy 2-core CI machine takes well over ten seconds. A bound, not a timing.
const PROCESS_TEST_MS = 180_000;

interface WebhooksProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** The status of a delivery `{}` to the receiver on `port` with these headers (fetch cannot set Host). */
function statusOf(port: number, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/webhook', method: 'POST', headers: { 'Content-Type': 'application/json', ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end('{}');
  });
}

function startWebhooks(env: Record<string, string>): WebhooksProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/webhooks.ts'], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', WEBHOOK_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  cleanup.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  return { child, output: () => output, exited };
}

describe('npm run start:webhooks', () => {
  it('starts configured runs on the shared Redis queue, which a worker completes; SIGTERM exits 0', async () => {
    const prefix = uniquePrefix('webhooks');
    const api = await startTestApi({ redisUrl: redis.url, env: { SERVICE_KEY_PREFIX: prefix } });
    cleanup.push(() => api.close());
    createWorker(api.composition);

    const port = await freePort();
    const webhooks = startWebhooks({
      REDIS_URL: redis.url,
      SERVICE_KEY_PREFIX: prefix,
      SERVICE_SHUTDOWN_DELAY_MS: '0',
      WEBHOOK_PORT: String(port),
      WEBHOOK_SECRET: 'hook-secret',
      WEBHOOK_ROUTES: 'deploy=echo',
    });
    await waitFor('the receiver to listen', () => webhooks.output().includes('webhook receiver listening'), 60_000);

    const refused = await call(`http://127.0.0.1:${port}/webhook`, { method: 'POST', headers: { 'X-Event-Type': 'deploy' }, json: {} });
    expect(refused.status, webhooks.output()).toBe(401);
    const delivered = await call(`http://127.0.0.1:${port}/webhook`, {
      method: 'POST',
      headers: { 'X-Webhook-Secret': 'hook-secret', 'X-Event-Type': 'deploy' },
      json: { version: '1.2.3' },
    });
    expect(delivered, webhooks.output()).toMatchObject({ status: 200, body: { status: 'ok', handled: 1 } });

    const session = await waitFor('the echo session', async () => (await call(`${api.url}/api/sessions`)).body.sessions[0], 15_000);
    expect(session.agent_id).toBe('echo');
    await waitFor('the completed run', async () => (await call(`${api.url}/api/runs?session_id=${session.id}`)).body.runs[0]?.status === 'completed', 15_000);
    const state = await call(`${api.url}/api/sessions/state?session_id=${session.id}`);
    expect(state.body.state).toMatchObject({ echoed: true, webhook: { type: 'deploy', payload: { version: '1.2.3' } } });

    webhooks.child.kill('SIGTERM');
    expect(await webhooks.exited, webhooks.output()).toBe(0);
  }, PROCESS_TEST_MS);

  it('refuses to start with a route to an unknown agent, a bad variable, without REDIS_URL, or open to anyone', async () => {
    const port = String(await freePort());
    const open = startWebhooks({ REDIS_URL: redis.url, WEBHOOK_PORT: port, WEBHOOK_ROUTES: 'push=echo' });
    expect(await open.exited).toBe(1);
    expect(open.output()).toMatch(/WEBHOOK_SECRET: .*WEBHOOK_INSECURE=true/);
    expect(open.output().trim().split('\n')).toHaveLength(1);

    const unknownAgent = startWebhooks({ REDIS_URL: redis.url, WEBHOOK_PORT: port, WEBHOOK_SECRET: 's', WEBHOOK_ROUTES: 'push=no-such-agent' });
    expect(await unknownAgent.exited).toBe(1);
    expect(unknownAgent.output()).toContain('no-such-agent');

    const badScheme = startWebhooks({ REDIS_URL: redis.url, WEBHOOK_PORT: port, WEBHOOK_SIGNATURE: 'github' });
    expect(await badScheme.exited).toBe(1);
    expect(badScheme.output()).toContain('WEBHOOK_SIGNING_SECRET');

    const noRedis = startWebhooks({ WEBHOOK_PORT: port, WEBHOOK_SECRET: 's', WEBHOOK_ROUTES: 'push=echo' });
    expect(await noRedis.exited).toBe(1);
    expect(noRedis.output()).toContain('REDIS_URL');
  }, PROCESS_TEST_MS);

  it('starts open only with WEBHOOK_INSECURE=true, and warns that anyone can start runs', async () => {
    const port = await freePort();
    const insecure = startWebhooks({ REDIS_URL: redis.url, SERVICE_KEY_PREFIX: uniquePrefix('insecure'), WEBHOOK_PORT: String(port), WEBHOOK_INSECURE: 'true' });
    await waitFor('the receiver to listen and warn', () => insecure.output().includes('checks neither a secret nor a signature'), 60_000);
    expect(insecure.output()).toMatch(/WEBHOOK_INSECURE=true: no authentication; only this machine can call 127\.0\.0\.1:\d+, by the Host names localhost, 127\.0\.0\.1, \[::1\] \(SERVICE_ALLOWED_HOSTS\); the receiver checks neither a secret nor a signature/);
    const delivered = await call(`http://127.0.0.1:${port}/webhook`, { method: 'POST', json: {} });
    expect(delivered).toMatchObject({ status: 200, body: { status: 'ok', handled: 0 } });
    // Open, it answers only this machine's names (not a DNS-rebinding one) and no browser page.
    expect(await statusOf(port, { Host: 'rebind.evil.example' })).toBe(403);
    expect(await statusOf(port, { Host: `localhost:${port}`, Origin: 'https://evil.example', 'Content-Type': 'text/plain' })).toBe(403);
    expect(await statusOf(port, { Host: `localhost:${port}` })).toBe(200);
    insecure.child.kill('SIGTERM');
    expect(await insecure.exited, insecure.output()).toBe(0);
  }, PROCESS_TEST_MS);
});
