import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { AppError } from '../../src/domain/errors.js';
import { DEFAULT_STORAGE_LIMITS } from '../../src/domain/types.js';
import { loadWebhooksConfig, webhookBodyLimit, WEBHOOK_STATE_RESERVE_BYTES } from '../../src/integrations/webhook/config.js';
import { configuredReceiver } from '../../src/integrations/webhook/configured-receiver.js';
import { WebhookReceiver } from '../../src/integrations/webhook/webhook-receiver.js';
import { silentLogger } from '../../src/integrations/shared/silent-logger.js';
import { call, startTestApi } from '../support/app.js';

// The receiver's body limit against the state limit of the runs it starts; the same through
// real processes on Redis is webhook-limits-process.test.ts.

const KiB = 1024;
const MiB = 1024 * KiB;

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function serve(receiver: WebhookReceiver): Promise<string> {
  const server = await receiver.listen({ port: 0, host: '127.0.0.1' });
  cleanup.push(() => receiver.close());
  return `${server.url}/webhook`;
}

/** A compact JSON document of exactly `bytes` bytes. */
function jsonOfSize(bytes: number): string {
  return `{"pad":"${'x'.repeat(bytes - '{"pad":""}'.length)}"}`;
}

function chunked(text: string): RequestInit {
  const bytes = new TextEncoder().encode(text);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < bytes.length; at += 16 * KiB) controller.enqueue(bytes.subarray(at, at + 16 * KiB));
      controller.close();
    },
  });
  return { method: 'POST', body, duplex: 'half' } as RequestInit;
}

describe('webhook body limit and state limit', () => {
  it('reads 1 MiB by default, which the default state limit holds with the reserve; less when SERVICE_MAX_STATE_BYTES is lower', () => {
    expect(DEFAULT_STORAGE_LIMITS.maxStateBytes).toBe(MiB + WEBHOOK_STATE_RESERVE_BYTES);
    expect(webhookBodyLimit(DEFAULT_STORAGE_LIMITS.maxStateBytes)).toBe(MiB);
    expect(loadWebhooksConfig({ WEBHOOK_SECRET: 's' }).maxBodyBytes).toBe(MiB);
    expect(webhookBodyLimit(16 * MiB)).toBe(MiB);
    expect(loadWebhooksConfig({ WEBHOOK_SECRET: 's' }, MiB).maxBodyBytes).toBe(MiB - WEBHOOK_STATE_RESERVE_BYTES);
    expect(webhookBodyLimit(256 * KiB)).toBe(192 * KiB);
    expect(webhookBodyLimit(WEBHOOK_STATE_RESERVE_BYTES + KiB)).toBe(KiB);
  });

  it('refuses a state limit that leaves less than 1 KiB for a delivery, naming SERVICE_MAX_STATE_BYTES', () => {
    for (const maxStateBytes of [1, WEBHOOK_STATE_RESERVE_BYTES, WEBHOOK_STATE_RESERVE_BYTES + KiB - 1]) {
      expect(() => loadWebhooksConfig({ WEBHOOK_SECRET: 's' }, maxStateBytes)).toThrow(ConfigError);
      expect(() => webhookBodyLimit(maxStateBytes)).toThrow(/^Invalid configuration: SERVICE_MAX_STATE_BYTES: the webhook receiver needs at least 66560 /);
    }
  });

  it('reads up to maxBodyBytes, with a Content-Length and chunked, and answers 413 one byte past it before any handler', async () => {
    const sizes: number[] = [];
    const url = await serve(new WebhookReceiver({ maxBodyBytes: 100 * KiB }).on('*', (event) => void sizes.push(event.body.length)));
    for (const init of [{ method: 'POST', body: jsonOfSize(100 * KiB) }, chunked(jsonOfSize(100 * KiB))]) {
      expect((await call(url, init)).status).toBe(200);
    }
    for (const init of [{ method: 'POST', body: jsonOfSize(100 * KiB + 1) }, chunked(jsonOfSize(100 * KiB + 1))]) {
      const over = await call(url, init);
      expect(over).toMatchObject({ status: 413, body: { error: { code: 'payload_too_large', message: `The request body exceeds ${100 * KiB} bytes.` } } });
    }
    expect(sizes).toEqual([100 * KiB, 100 * KiB]);
  });

  it.each([0, 1.5, MiB + 1])('refuses maxBodyBytes %s at construction', (maxBodyBytes) => {
    expect(() => new WebhookReceiver({ maxBodyBytes })).toThrow(/maxBodyBytes must be an integer from 1 to 1048576/);
  });

  it('answers 413 when every failed handler found the delivery too large, and 500 when another failure is among them', async () => {
    const tooLarge = () => {
      throw new AppError('payload_too_large', 'The merged state would be larger than the state size limit.');
    };
    const url = await serve(
      new WebhookReceiver()
        .on('big', tooLarge)
        .on('big', () => undefined)
        .on('big', tooLarge)
        .on('mixed', tooLarge)
        .on('mixed', () => {
          throw new Error('queue down');
        }),
    );
    const big = await call(url, { method: 'POST', headers: { 'X-Event-Type': 'big' }, body: '{}' });
    expect(big).toMatchObject({ status: 413, body: { error: { code: 'payload_too_large', message: expect.stringContaining('SERVICE_MAX_STATE_BYTES') } } });
    const mixed = await call(url, { method: 'POST', headers: { 'X-Event-Type': 'mixed' }, body: '{}' });
    expect(mixed).toMatchObject({ status: 500, body: { status: 'error', errors: ['payload_too_large', 'internal'] } });
  });

  it('starts the run of a delivery at the limit, and answers 413 with no session to one whose input the state cannot hold', async () => {
    const maxStateBytes = 128 * KiB;
    const api = await startTestApi({ env: { SERVICE_MAX_STATE_BYTES: String(maxStateBytes) } });
    cleanup.push(() => api.close());
    const config = loadWebhooksConfig({ WEBHOOK_SECRET: 's', WEBHOOK_ROUTES: '*=echo' }, maxStateBytes);
    const url = await serve(configuredReceiver(config, api.composition.runs, silentLogger()));
    const headers = { 'X-Webhook-Secret': 's', 'Content-Type': 'application/json' };

    // JSON numbers such as 1e15 come back as 16 digits: within the body limit, past the state's.
    const numbers = `{"n":[${Array(Math.floor((config.maxBodyBytes - 8) / 5)).fill('1e15').join(',')}]}`;
    expect(numbers.length).toBeLessThanOrEqual(config.maxBodyBytes);
    const expanded = await call(url, { method: 'POST', headers, body: numbers });
    expect(expanded).toMatchObject({ status: 413, body: { error: { code: 'payload_too_large' } } });
    expect((await call(`${api.url}/api/sessions`)).body.sessions).toEqual([]);

    const atLimit = await call(url, { method: 'POST', headers, body: jsonOfSize(config.maxBodyBytes) });
    expect(atLimit).toMatchObject({ status: 200, body: { status: 'ok', handled: 1 } });
    expect((await call(`${api.url}/api/sessions`)).body.sessions).toHaveLength(1);
  });
});
