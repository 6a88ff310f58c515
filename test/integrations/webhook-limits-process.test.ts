import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { startProcess, type AgentProcess } from '../support/processes.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/*
 * A delivery the receiver accepts starts its run: `npm run start:webhooks` as a real process,
 * a worker process and an API on one Redis. A body of exactly the receiver's limit (1 MiB by
 * default), sent with a Content-Length and chunked, is 200 and its run completes with the whole
 * payload in its state; one byte more is 413 and starts nothing. With SERVICE_MAX_STATE_BYTES
 * lowered, the receiver's limit follows it, and a payload that still does not fit the state
 * once wrapped is 413, never 500 (a sender would redeliver a 500 forever).
 */

const MiB = 1024 * 1024;
const SECRET = 'limits-secret';
// Bounds for processes to start and runs to end on a busy 2-core CI machine (tsx compiles each
// process's sources at start); nothing is timed.
const READY_MS = 60_000;
const TEST_MS = 240_000;

let redis: TestRedis;
let api: TestApi;
let worker: AgentProcess;
let prefix: string;

beforeAll(async () => {
  redis = await startRedis();
  prefix = uniquePrefix('webhook-limits');
  api = await startTestApi({ redisUrl: redis.url, env: { SERVICE_KEY_PREFIX: prefix } });
  worker = await startProcess({
    entry: 'src/main/worker.ts',
    portVariable: 'WORKER_PORT',
    readyTimeoutMs: READY_MS,
    env: { REDIS_URL: redis.url, SERVICE_KEY_PREFIX: prefix, LOG_LEVEL: 'warn' },
  });
}, 2 * READY_MS);
afterAll(async () => {
  await worker?.stop();
  await api?.close();
  await redis?.stop();
}, READY_MS);

function startReceiver(env: Record<string, string> = {}): Promise<AgentProcess> {
  return startProcess({
    entry: 'src/main/webhooks.ts',
    portVariable: 'WEBHOOK_PORT',
    readyTimeoutMs: READY_MS,
    env: {
      REDIS_URL: redis.url,
      SERVICE_KEY_PREFIX: prefix,
      SERVICE_SHUTDOWN_DELAY_MS: '0',
      WEBHOOK_HOST: '127.0.0.1',
      WEBHOOK_SECRET: SECRET,
      WEBHOOK_ROUTES: '*=echo',
      LOG_LEVEL: 'info',
      ...env,
    },
  });
}

/** A compact JSON document of exactly `bytes` bytes (ASCII, so bytes and characters agree). */
function jsonOfSize(bytes: number): string {
  const shell = '{"pad":""}';
  return `{"pad":"${'x'.repeat(bytes - shell.length)}"}`;
}

/** Posts `body` to the receiver as event type `type`, with a Content-Length or chunked. */
function deliver(receiver: AgentProcess, type: string, body: string, encoding: 'length' | 'chunked'): ReturnType<typeof call> {
  const bytes = new TextEncoder().encode(body);
  const chunked = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < bytes.length; at += 64 * 1024) controller.enqueue(bytes.subarray(at, at + 64 * 1024));
      controller.close();
    },
  });
  return call(`${receiver.url}/webhook`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Webhook-Secret': SECRET, 'X-Event-Type': type, 'X-Event-Source': 'limits' },
    ...(encoding === 'length' ? { body } : { body: chunked, duplex: 'half' }),
  } as RequestInit);
}

async function runCount(): Promise<number> {
  return ((await call(`${api.url}/api/runs?limit=500`)).body.runs as unknown[]).length;
}

/** The run the receiver started for the delivery of `type` (from its log), once it completed, with its session's state. */
async function completedRunOf(receiver: AgentProcess, type: string): Promise<{ status: string; state: Record<string, any> }> {
  const started = await receiver.waitForLine((line) => line.json?.msg === 'webhook started a run' && line.json.type === type, READY_MS);
  const runId = started.json!.run_id as string;
  const run = await waitFor(`the run of ${type} to end`, async () => {
    const current = (await call(`${api.url}/api/runs/${runId}`)).body;
    return ['completed', 'failed', 'cancelled'].includes(current?.status) ? current : undefined;
  }, READY_MS);
  const state = (await call(`${api.url}/api/sessions/state?session_id=${run.session_id}`)).body.state;
  return { status: run.status, state };
}

describe('webhook receiver process: body limit and state limit', () => {
  it('starts and completes the run of an exactly-1-MiB delivery, with a Content-Length and chunked', async () => {
    const receiver = await startReceiver();
    try {
      const body = jsonOfSize(MiB);
      for (const encoding of ['length', 'chunked'] as const) {
        const answer = await deliver(receiver, `exact-${encoding}`, body, encoding);
        expect(answer, encoding).toMatchObject({ status: 200, body: { status: 'ok', handled: 1 } });
        const run = await completedRunOf(receiver, `exact-${encoding}`);
        expect(run.status, encoding).toBe('completed');
        expect(run.state.echoed).toBe(true);
        expect(run.state.webhook.type).toBe(`exact-${encoding}`);
        expect(JSON.stringify(run.state.webhook.payload)).toBe(body);
      }
    } finally {
      await receiver.stop();
    }
  }, TEST_MS);

  it('answers 413 to 1 MiB + 1 byte, with a Content-Length and chunked, and starts no run', async () => {
    const receiver = await startReceiver();
    try {
      const before = await runCount();
      for (const encoding of ['length', 'chunked'] as const) {
        const answer = await deliver(receiver, `over-${encoding}`, jsonOfSize(MiB + 1), encoding);
        expect(answer.status, encoding).toBe(413);
        expect(answer.body, encoding).toEqual({ error: { code: 'payload_too_large', message: `The request body exceeds ${MiB} bytes.` } });
      }
      // The receiver starts a run before it answers: none was started by then.
      expect(await runCount()).toBe(before);
    } finally {
      await receiver.stop();
    }
  }, TEST_MS);

  it('with SERVICE_MAX_STATE_BYTES lowered, accepts only what a run can hold and refuses the rest with 413 up front', async () => {
    const maxStateBytes = 256 * 1024;
    const receiver = await startReceiver({ SERVICE_MAX_STATE_BYTES: String(maxStateBytes) });
    try {
      const limit = maxStateBytes - 64 * 1024;
      const fits = await deliver(receiver, 'lowered-fits', jsonOfSize(limit), 'length');
      expect(fits).toMatchObject({ status: 200, body: { status: 'ok', handled: 1 } });
      expect((await completedRunOf(receiver, 'lowered-fits')).status).toBe('completed');

      const before = await runCount();
      for (const encoding of ['length', 'chunked'] as const) {
        const over = await deliver(receiver, 'lowered-over', jsonOfSize(limit + 1), encoding);
        expect(over, encoding).toMatchObject({ status: 413, body: { error: { code: 'payload_too_large', message: `The request body exceeds ${limit} bytes.` } } });
      }
      // Within the body limit, but JSON numbers such as 1e15 come back as 16 digits: the run input
      // would pass the state limit, so the store refuses it, which the sender hears as 413.
      const numbers = `{"n":[${Array(Math.floor((limit - 8) / 5)).fill('1e15').join(',')}]}`;
      expect(numbers.length).toBeLessThanOrEqual(limit);
      const expanded = await deliver(receiver, 'lowered-expanded', numbers, 'length');
      expect(expanded).toMatchObject({ status: 413, body: { error: { code: 'payload_too_large' } } });
      expect(await runCount()).toBe(before);
    } finally {
      await receiver.stop();
    }
  }, TEST_MS);

  it('refuses to start when SERVICE_MAX_STATE_BYTES leaves no room for a delivery, naming the variable', async () => {
    await expect(startReceiver({ SERVICE_MAX_STATE_BYTES: String(64 * 1024) })).rejects.toThrow(/SERVICE_MAX_STATE_BYTES/);
  }, TEST_MS);
});
