import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { builtInAgents } from '../../src/agents/index.js';
import { AppError } from '../../src/domain/errors.js';
import { MAX_WEBHOOK_URL_BYTES } from '../../src/domain/run-webhook.js';
import { DEFAULT_TENANT } from '../../src/domain/types.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { postWebhook } from '../../src/runtime/webhook-post.js';
import { checkedAddresses, refusedAddressKind } from '../../src/runtime/webhook-address.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { graphAgent } from '../support/langgraph.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/**
 * Run webhooks (LangGraph's `webhook`) on both backends: a real receiver on loopback (allowed
 * by SERVICE_WEBHOOK_ALLOW_PRIVATE in these apps) gets the run, signed per Standard Webhooks,
 * when it completes or fails; a receiver failing twice gets it on the third attempt; with the
 * setting off, loopback is never called and the refusal is logged; the run path never waits
 * for a delivery.
 */

const SECRET_BYTES = randomBytes(32);
const SECRET = `whsec_${SECRET_BYTES.toString('base64')}`;

interface Delivery {
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
}

/** A webhook receiver: records each POST; `answer` decides the status, or holds the response (null) until released. */
class Receiver {
  readonly deliveries: Delivery[] = [];
  private readonly held: ServerResponse[] = [];
  private server!: Server;
  port = 0;

  constructor(private readonly answer: (delivery: Delivery, earlier: number) => number | null) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const delivery = { path: req.url ?? '', headers: req.headers, raw, body: JSON.parse(raw) };
        const earlier = this.deliveries.filter((d) => d.path === delivery.path).length;
        this.deliveries.push(delivery);
        const status = this.answer(delivery, earlier);
        if (status === null) this.held.push(res);
        else res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  url(path: string, host = '127.0.0.1'): string {
    return `http://${host}:${this.port}${path}`;
  }

  to(path: string): Delivery[] {
    return this.deliveries.filter((d) => d.path === path);
  }

  /** Answers every held request 200. */
  release(): void {
    for (const res of this.held.splice(0)) res.writeHead(200).end();
  }

  async stop(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The receiver's answers by path: `/flaky/…` 500 twice then 200, `/hold/…` held, `/gone/…` 410, anything else 200. */
const answers = (delivery: Delivery, earlier: number): number | null => {
  if (delivery.path.startsWith('/flaky/')) return earlier < 2 ? 500 : 200;
  if (delivery.path.startsWith('/hold/')) return null;
  if (delivery.path.startsWith('/gone/')) return 410;
  return 200;
};

/** Verifies a delivery's Standard Webhooks signature with the secret, as a receiver would. */
function signatureValid(delivery: Delivery, key: Buffer = SECRET_BYTES): boolean {
  const id = String(delivery.headers['webhook-id']);
  const timestamp = String(delivery.headers['webhook-timestamp']);
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${delivery.raw}`).digest('base64');
  return String(delivery.headers['webhook-signature'] ?? '')
    .split(' ')
    .some((entry) => entry === `v1,${expected}`);
}

/** A graph node that fails on "boom" and, on "gate", waits until the test opens the gate. */
const State = Annotation.Root({ text: Annotation<string>, reply: Annotation<string> });
let openGate!: () => void;
let gate = new Promise<void>((resolve) => (openGate = resolve));
const replyGraph = new StateGraph(State)
  .addNode('answer', async (state) => {
    if (state.text === 'boom') throw new Error('the graph failed on purpose');
    if (state.text === 'gate') await gate;
    return { reply: `hello ${state.text}` };
  })
  .addEdge(START, 'answer')
  .addEdge('answer', END)
  .compile();

const agents = () => new AgentRegistry([...builtInAgents, graphAgent('wh-graph', replyGraph, ['answer'])]);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe.each(['memory', 'redis'] as const)('run webhooks on %s', (backend) => {
  let redis: TestRedis | undefined;
  let app: TestApi;
  /** Another app, SERVICE_WEBHOOK_ALLOW_PRIVATE off (the default). */
  let strict: TestApi;
  const receiver = new Receiver(answers);

  const start = (on: TestApi, request: Parameters<TestApi['composition']['runs']['startRun']>[1]) =>
    on.composition.runs.startRun(DEFAULT_TENANT, request);
  const runUntil = (on: TestApi, runId: string, status: string) =>
    waitFor(`run ${runId} ${status}`, async () => {
      const run = await on.backend.store.runs.getRun(DEFAULT_TENANT, runId);
      return run?.status === status && run;
    });
  const deliveredTo = (path: string, count = 1) => waitFor(`${count} deliveries to ${path}`, () => receiver.to(path).length >= count && receiver.to(path));
  const logged = (on: TestApi, msg: string, runId: string) =>
    waitFor(`the log line "${msg}" of run ${runId}`, () => on.logs.find((line) => line.msg === msg && line.run_id === runId));

  beforeAll(async () => {
    await receiver.start();
    if (backend === 'redis') redis = await startRedis();
    const common = { agents: agents(), ...(redis ? { redisUrl: redis.url } : {}) };
    app = await startTestApi({
      ...common,
      env: { SERVICE_WEBHOOK_ALLOW_PRIVATE: 'true', SERVICE_WEBHOOK_SIGNING_SECRET: SECRET, SERVICE_WEBHOOK_BACKOFF_MS: '50' },
    });
    strict = await startTestApi({ ...common, env: { SERVICE_WEBHOOK_SIGNING_SECRET: SECRET } });
    expect([app.backend.mode, strict.backend.mode]).toEqual([backend, backend]);
    app.composition.startExecuting();
    strict.composition.startExecuting();
  });

  afterAll(async () => {
    await app?.close();
    await strict?.close();
    await redis?.stop();
    await receiver.stop();
  });

  it('POSTs a completed graph run, as LangGraph shows it, with its values, signed with the secret', async () => {
    const path = `/done/${backend}`;
    const asked = Date.now();
    const ticket = await start(app, { agent_id: 'wh-graph', graph: { input: { text: 'ada' }, metadata: { origin: 'test' }, webhook: receiver.url(path) } });
    await runUntil(app, ticket.run_id, 'completed');
    const [delivery] = await deliveredTo(path);
    const received = Date.now();
    expect(delivery!.body).toMatchObject({
      run_id: ticket.run_id,
      thread_id: ticket.session_id,
      status: 'success',
      metadata: { origin: 'test' },
      values: { text: 'ada', reply: 'hello ada' },
    });
    expect(delivery!.body.assistant_id).toMatch(UUID);
    expect(Date.parse(delivery!.body.webhook_sent_at)).not.toBeNaN();
    expect(delivery!.body).not.toHaveProperty('error');
    expect(delivery!.headers['content-type']).toBe('application/json');
    expect(delivery!.headers['webhook-id']).toBe(`msg_${ticket.run_id}`);
    // Sent (this process's clock, whole seconds) after the run was asked for and before it was received.
    const sentAt = Number(delivery!.headers['webhook-timestamp']);
    expect(sentAt).toBeGreaterThanOrEqual(Math.floor(asked / 1000));
    expect(sentAt).toBeLessThanOrEqual(Math.floor(received / 1000));
    expect(signatureValid(delivery!)).toBe(true);
    expect(signatureValid(delivery!, randomBytes(32))).toBe(false);
    await logged(app, 'run webhook delivered', ticket.run_id);
  });

  it('POSTs a failed graph run with its error, and a native run started with `webhook`', async () => {
    const failedPath = `/failed/${backend}`;
    const failed = await start(app, { agent_id: 'wh-graph', graph: { input: { text: 'boom' }, webhook: receiver.url(failedPath) } });
    await runUntil(app, failed.run_id, 'failed');
    const [failure] = await deliveredTo(failedPath);
    expect(failure!.body).toMatchObject({ run_id: failed.run_id, status: 'error' });
    expect(failure!.body.error).toContain('the graph failed on purpose');
    expect(signatureValid(failure!)).toBe(true);

    const nativePath = `/native/${backend}`;
    const native = await start(app, { agent_id: 'echo', input: { hello: 'world' }, webhook: receiver.url(nativePath) });
    await runUntil(app, native.run_id, 'completed');
    const [delivery] = await deliveredTo(nativePath);
    expect(delivery!.body).toMatchObject({ run_id: native.run_id, thread_id: native.session_id, status: 'success', values: { hello: 'world', echoed: true } });
    expect(signatureValid(delivery!)).toBe(true);
  });

  it('tries again after 500s: the third attempt is delivered, under the same webhook-id', async () => {
    const path = `/flaky/${backend}`;
    const ticket = await start(app, { agent_id: 'echo', input: {}, webhook: receiver.url(path) });
    const attempts = await deliveredTo(path, 3);
    await logged(app, 'run webhook delivered', ticket.run_id);
    expect(attempts.map((d) => d.headers['webhook-id'])).toEqual(Array(3).fill(`msg_${ticket.run_id}`));
    expect(attempts.every((d) => signatureValid(d))).toBe(true);
    const delivered = app.logs.find((line) => line.msg === 'run webhook delivered' && line.run_id === ticket.run_id);
    expect(delivered).toMatchObject({ attempt: 3, status: 200, webhook: `http://127.0.0.1:${receiver.port}` });
    expect(receiver.to(path)).toHaveLength(3);
  });

  it('does not try again after an answer another attempt would not change (410)', async () => {
    const path = `/gone/${backend}`;
    const ticket = await start(app, { agent_id: 'echo', input: {}, webhook: receiver.url(path) });
    await logged(app, 'run webhook refused by its receiver; not tried again', ticket.run_id);
    // A retry would be due 50 ms (SERVICE_WEBHOOK_BACKOFF_MS) after the answer: a delivery
    // enqueued well after that comes after it, since both queues take due retries first.
    const due = Date.now() + 20 * 50;
    await waitFor('the retry to be long due', () => Date.now() > due);
    const later = await start(app, { agent_id: 'echo', input: {}, webhook: receiver.url(`/after-gone/${backend}`) });
    await deliveredTo(`/after-gone/${backend}`);
    await logged(app, 'run webhook delivered', later.run_id);
    expect(receiver.to(path)).toHaveLength(1);
  });

  it('never calls loopback with SERVICE_WEBHOOK_ALLOW_PRIVATE off, by address or by a name resolving to it, and logs why', async () => {
    const byAddress = await start(strict, { agent_id: 'echo', input: {}, webhook: receiver.url(`/refused/${backend}`) });
    const byName = await start(strict, { agent_id: 'echo', input: {}, webhook: receiver.url(`/refused-name/${backend}`, 'localhost') });
    await runUntil(strict, byAddress.run_id, 'completed');
    const refused = await logged(strict, 'run webhook refused: its address is not allowed', byAddress.run_id);
    expect(refused.reason).toMatch(/127\.0\.0\.1 is loopback; SERVICE_WEBHOOK_ALLOW_PRIVATE=true allows it/);
    const refusedName = await logged(strict, 'run webhook refused: its address is not allowed', byName.run_id);
    expect(refusedName.reason).toMatch(/^localhost resolves to .*, which is loopback/);
    expect(receiver.to(`/refused/${backend}`)).toEqual([]);
    expect(receiver.to(`/refused-name/${backend}`)).toEqual([]);
    expect(strict.logs.some((line) => String(line.msg).startsWith('run webhook') && line.msg !== 'run webhook refused: its address is not allowed')).toBe(false);
  });

  it('keeps the run path free: the run queued behind completes while the delivery is unanswered', async () => {
    gate = new Promise<void>((resolve) => (openGate = resolve));
    const path = `/hold/${backend}`;
    const first = await start(app, { agent_id: 'wh-graph', graph: { input: { text: 'gate' }, webhook: receiver.url(path) } });
    const second = await start(app, { agent_id: 'wh-graph', session_id: first.session_id, multitask: 'enqueue', graph: { input: { text: 'next' } } });
    await runUntil(app, first.run_id, 'running');
    openGate();
    await deliveredTo(path);
    await runUntil(app, second.run_id, 'completed');
    expect(app.logs.some((line) => line.msg === 'run webhook delivered' && line.run_id === first.run_id)).toBe(false);
    receiver.release();
    await logged(app, 'run webhook delivered', first.run_id);
  });

  it('refuses a webhook that is no http(s) URL or longer than 2 KiB (400), creating no run', async () => {
    const session = `wh-bad-${backend}`;
    const long = `https://example.com/${'a'.repeat(MAX_WEBHOOK_URL_BYTES)}`;
    for (const webhook of ['ftp://example.com/hook', 'not a url', long]) {
      const error = await start(app, { agent_id: 'echo', session_id: session, input: {}, webhook }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe('bad_request');
      expect((error as AppError).message).toMatch(/^webhook: /);
    }
    const graphError = await start(app, { agent_id: 'wh-graph', session_id: session, graph: { input: { text: 'x' }, webhook: 42 } }).catch((e: unknown) => e);
    expect((graphError as AppError).code).toBe('bad_request');
    expect(await app.backend.store.runs.latestRun(DEFAULT_TENANT, session)).toBeNull();
  });
});

describe('webhook addresses', () => {
  it('refuses loopback, unspecified, link-local, private, CGNAT and ULA addresses, IPv4 written as IPv6 too', () => {
    const refused = ['127.0.0.1', '0.0.0.0', '169.254.169.254', '10.0.0.1', '172.16.5.4', '192.168.1.1', '100.64.0.1', '::1', '::', 'fe80::1', 'fd12::1', '::ffff:10.0.0.1', '::ffff:7f00:1'];
    expect(refused.filter((address) => refusedAddressKind(address) === null)).toEqual([]);
    const allowed = ['8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8'];
    expect(allowed.filter((address) => refusedAddressKind(address) !== null)).toEqual([]);
  });

  it('connects to the address it checked, never resolving the name again (DNS rebinding)', async () => {
    const receiver = new Receiver(() => 204);
    await receiver.start();
    try {
      // The checked answer is loopback (allowed here); the name itself resolves nowhere.
      const addresses = await checkedAddresses('rebinding.invalid', true, async () => [{ address: '127.0.0.1', family: 4 }]);
      await expect(checkedAddresses('rebinding.invalid', false, async () => [{ address: '127.0.0.1', family: 4 }])).rejects.toThrow(/loopback/);
      const url = new URL(receiver.url('/pinned', 'rebinding.invalid'));
      const status = await postWebhook({ url, body: Buffer.from('{}'), headers: { 'content-type': 'application/json' }, addresses, timeoutMs: 5_000 });
      expect(status).toBe(204);
      expect(receiver.to('/pinned')[0]!.headers.host).toBe(`rebinding.invalid:${receiver.port}`);
    } finally {
      await receiver.stop();
    }
  });
});
