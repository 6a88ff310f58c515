import { AppError } from '../../src/domain/errors.js';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { WebhookReceiver, type WebhookEvent } from '../../src/integrations/webhook/webhook-receiver.js';
import { waitFor } from '../support/wait.js';
import { mount } from '../support/chat.js';

const MiB = 1024 * 1024;
const servers: { close(): Promise<void> }[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** Mounts the receiver on a Koa app of its own; the server is closed after the test. */
async function mountReceiver(receiver: WebhookReceiver): Promise<string> {
  const server = await mount(receiver.middleware());
  servers.push(server);
  return server.url;
}

function post(url: string, body: string | Uint8Array, headers: Record<string, string> = {}): Promise<Response> {
  // A copy on an ArrayBuffer of its own: fetch's BodyInit takes no view of a shared buffer.
  return fetch(url, { method: 'POST', body: typeof body === 'string' ? body : new Uint8Array(body), headers: { 'Content-Type': 'application/json', ...headers } });
}

/** A JSON document of exactly `bytes` bytes. */
function jsonOfSize(bytes: number): string {
  const shell = '{"pad":""}';
  return `{"pad":"${'x'.repeat(bytes - shell.length)}"}`;
}

describe('webhook receiver', () => {
  it('answers 405 with Allow: POST to GET and PUT, calling no handler', async () => {
    const calls: WebhookEvent[] = [];
    const url = await mountReceiver(new WebhookReceiver().on('*', (event) => void calls.push(event)));
    for (const method of ['GET', 'PUT']) {
      const response = await fetch(`${url}/webhook`, { method, ...(method === 'PUT' ? { body: '{}' } : {}) });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect(await response.json()).toEqual({ error: { code: 'method_not_allowed', message: expect.any(String) } });
    }
    expect(calls).toHaveLength(0);
  });

  it('answers 401 to a wrong or missing X-Webhook-Secret and 200 to the right one', async () => {
    const calls: WebhookEvent[] = [];
    const url = await mountReceiver(new WebhookReceiver({ secret: 's3cret' }).on('*', (event) => void calls.push(event)));
    const wrong = await post(`${url}/webhook`, '{}', { 'X-Webhook-Secret': 's3cres' });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
    expect((await post(`${url}/webhook`, '{}', { 'X-Webhook-Secret': 's3cret-longer' })).status).toBe(401);
    expect((await post(`${url}/webhook`, '{}')).status).toBe(401);
    expect(calls).toHaveLength(0);
    const right = await post(`${url}/webhook`, '{}', { 'X-Webhook-Secret': 's3cret' });
    expect(right.status).toBe(200);
    expect(calls).toHaveLength(1);
  });

  it('accepts a body of exactly 1 MiB and refuses 1 MiB + 1 byte with 413 before any handler', async () => {
    const sizes: number[] = [];
    const url = await mountReceiver(new WebhookReceiver().on('*', (event) => void sizes.push(event.body.length)));
    const exact = await post(`${url}/webhook`, jsonOfSize(MiB));
    expect(exact.status).toBe(200);
    expect(sizes).toEqual([MiB]);
    const over = await post(`${url}/webhook`, jsonOfSize(MiB + 1));
    expect(over.status).toBe(413);
    expect(await over.json()).toEqual({ error: { code: 'payload_too_large', message: expect.any(String) } });
    expect(sizes).toEqual([MiB]);
  });

  it('refuses a chunked body that grows past 1 MiB without a Content-Length', async () => {
    const sizes: number[] = [];
    const url = await mountReceiver(new WebhookReceiver().on('*', (event) => void sizes.push(event.body.length)));
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > MiB) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const response = await fetch(`${url}/webhook`, { method: 'POST', body, duplex: 'half' } as RequestInit);
    expect(response.status).toBe(413);
    expect(sizes).toEqual([]);
  });

  it('answers 400 to a body that is not JSON, calling no handler', async () => {
    const calls: WebhookEvent[] = [];
    const url = await mountReceiver(new WebhookReceiver().on('*', (event) => void calls.push(event)));
    const response = await post(`${url}/webhook`, '{"unterminated":');
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: { code: 'bad_request', message: expect.any(String) } });
    expect(calls).toHaveLength(0);
  });

  it('hands handlers source, type, the raw bytes, the parsed payload and every header, on /webhook and beneath it', async () => {
    const events: WebhookEvent[] = [];
    const url = await mountReceiver(new WebhookReceiver().on('push', (event) => void events.push(event)).on('generic', (event) => void events.push(event)));
    const raw = '{ "ref" :  "refs/heads/main", "emoji": "\u00e9\u2713" }';
    const typed = await post(`${url}/webhook/github/org`, raw, { 'X-Event-Type': 'push', 'X-Event-Source': 'github', 'X-Custom': 'kept' });
    expect(typed.status).toBe(200);
    expect(await typed.json()).toEqual({ status: 'ok', handled: 1 });
    const untyped = await post(`${url}/webhook`, '[1,2]');
    expect(untyped.status).toBe(200);

    expect(events).toHaveLength(2);
    const [push, generic] = events as [WebhookEvent, WebhookEvent];
    expect(push.type).toBe('push');
    expect(push.source).toBe('github');
    expect(push.body.equals(Buffer.from(raw, 'utf8'))).toBe(true);
    expect(push.payload).toEqual({ ref: 'refs/heads/main', emoji: '\u00e9\u2713' });
    expect(push.headers).toMatchObject({ 'x-custom': 'kept', 'x-event-type': 'push', 'content-type': 'application/json' });
    expect(generic.type).toBe('generic');
    expect(generic.source).toBe('');
    expect(generic.payload).toEqual([1, 2]);
  });

  it('leaves other paths to the rest of the app', async () => {
    const receiver = new WebhookReceiver().on('*', () => undefined);
    const server = await mount(receiver.middleware(), (ctx) => {
      ctx.body = { fallthrough: ctx.path };
    });
    servers.push(server);
    const response = await post(`${server.url}/webhooks`, '{}');
    expect(await response.json()).toEqual({ fallthrough: '/webhooks' });
  });

  it('runs typed handlers then wildcard handlers, each in registration order, and counts them', async () => {
    const order: string[] = [];
    const receiver = new WebhookReceiver()
      .on('*', () => void order.push('wild-1'))
      .on('build', () => void order.push('build-1'))
      .on('other', () => void order.push('other'))
      .on('*', async () => {
        await Promise.resolve();
        order.push('wild-2');
      })
      .on('build', () => void order.push('build-2'));
    const url = await mountReceiver(receiver);
    const response = await post(`${url}/webhook`, '{}', { 'X-Event-Type': 'build' });
    expect(await response.json()).toEqual({ status: 'ok', handled: 4 });
    expect(order).toEqual(['build-1', 'build-2', 'wild-1', 'wild-2']);
  });

  it('answers 200 with handled 0 when no handler matches', async () => {
    const url = await mountReceiver(new WebhookReceiver().on('build', () => undefined));
    const response = await post(`${url}/webhook`, '{}', { 'X-Event-Type': 'deploy' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok', handled: 0 });
  });

  it('answers 500 listing each failed handler while the others still run', async () => {
    const ran: string[] = [];
    const receiver = new WebhookReceiver()
      .on('build', () => {
        ran.push('first');
        throw new Error('first handler broke');
      })
      .on('build', () => void ran.push('second'))
      .on('*', async () => {
        ran.push('wildcard');
        throw new Error('wildcard handler broke');
      })
      .on('*', () => void ran.push('last'));
    const url = await mountReceiver(receiver);
    const response = await post(`${url}/webhook`, '{}', { 'X-Event-Type': 'build' });
    expect(response.status).toBe(500);
    // Codes only: a handler's message (here, or a stack overflow's) is the operator's, in the log.
    expect(await response.json()).toEqual({ status: 'error', errors: ['internal', 'internal'] });
    expect(ran).toEqual(['first', 'second', 'wildcard', 'last']);
  });

  it("lists an agentplane error's code, never its message, and logs the details with the request id", async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const receiver = new WebhookReceiver({ logger })
      .on('build', () => {
        throw new AppError('unknown_agent', 'Agent "secret-internal-name" is not registered.');
      })
      .on('build', () => {
        throw new Error('Maximum call stack size exceeded');
      });
    const url = await mountReceiver(receiver);
    const response = await post(`${url}/webhook`, '{}', { 'X-Event-Type': 'build' });
    const text = await response.text();
    expect(response.status).toBe(500);
    expect(JSON.parse(text)).toEqual({ status: 'error', errors: ['unknown_agent', 'internal'] });
    expect(text).not.toMatch(/secret-internal-name|call stack/);
    const logged = lines.map((line) => JSON.parse(line)).filter((l) => l.msg === 'webhook handler failed');
    expect(logged.map((l) => [l.code, l.err.message])).toEqual([
      ['unknown_agent', 'Agent "secret-internal-name" is not registered.'],
      ['internal', 'Maximum call stack size exceeded'],
    ]);
  });

  it('refuses a body nested deeper than the API allows, or with numbers JSON would change, with 400 and no handler run', async () => {
    let calls = 0;
    const url = await mountReceiver(new WebhookReceiver().on('*', () => void (calls += 1)));
    const deep = await post(`${url}/webhook`, '['.repeat(5000) + ']'.repeat(5000), {});
    expect(deep.status).toBe(400);
    expect(await deep.json()).toEqual({ error: { code: 'bad_request', message: 'body: JSON nested deeper than 64 levels.' } });
    const huge = await post(`${url}/webhook`, '{"amount":1e400}', {});
    expect(huge.status).toBe(400);
    expect(((await huge.json()) as { error: { message: string } }).error.message).toMatch(/^body\.amount: the number is out of range/);
    const big = await post(`${url}/webhook`, '{"id":9007199254740993}', {});
    expect(((await big.json()) as { error: { message: string } }).error.message).toMatch(/^body\.id: /);
    expect(calls).toBe(0);
    const fine = await post(`${url}/webhook`, '['.repeat(60) + ']'.repeat(60), {});
    expect(fine.status).toBe(200);
    expect(calls).toBe(1);
  });

  it('listens standalone, and close() waits for a running delivery, then refuses with 503; close twice is fine', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started = false;
    let finished = false;
    const receiver = new WebhookReceiver().on('*', async () => {
      started = true;
      await gate;
      finished = true;
    });
    const server = await receiver.listen({ port: 0, host: '127.0.0.1' });
    const delivery = post(`${server.url}/webhook`, '{}');
    await waitFor('the handler to start', () => started);
    // The handler goes on a turn after close() was called: a close that does not wait resolves first.
    const finishedAtClose = receiver.close().then(() => finished);
    setImmediate(release);
    expect((await delivery).status).toBe(200);
    expect(await finishedAtClose, 'close resolved while a delivery was running').toBe(true);
    await receiver.close();

    const mounted = new WebhookReceiver().on('*', () => undefined);
    const url = await mountReceiver(mounted);
    await mounted.close();
    const refused = await post(`${url}/webhook`, '{}');
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual({ error: { code: 'unavailable', message: expect.any(String) } });
  });
});
