import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { DEFAULT_TENANT } from '../../src/domain/types.js';
import { createLogger } from '../../src/main/logger.js';
import { loadAgentsAndGraphs } from '../../src/main/process.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import type { AgentProcess } from '../support/processes.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { startRunWorker } from '../support/workers.js';

/**
 * The webhooks of stateless LangGraph runs (`POST /runs/wait`, `/runs/stream`, `/runs`), on both
 * backends (on Redis, the API in this process and a worker process): every run's webhook is
 * delivered, whatever its `on_completion`, and a deleted run's thread is gone once its webhook
 * is queued. And a receiver that answers 200 with a body it never finishes has the delivery once.
 */

/** The graphs of the API and the worker: `promised` answers `promised <word>` in one node. */
const GRAPHS = 'test/fixtures/langgraph-server/langgraph.json';
const CONCURRENT_WAITS = 40;
const CONCURRENT_STREAMS = 20;
/** An attempt's bound: a receiver whose body never ends would outlast it. */
const ATTEMPT_TIMEOUT_MS = 2_000;
/** What the `/huge/` receiver says its body is: 2,000 MiB. */
const HUGE_BODY_BYTES = 2_000 * 2 ** 20;

/** Records each delivery; `/huge/…` is answered 200 with the head of a 2,000 MiB body that never ends. */
class Receiver {
  readonly deliveries: { path: string; body: any }[] = [];
  private server!: Server;
  private readonly open: ServerResponse[] = [];
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.deliveries.push({ path: req.url ?? '', body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        if (!req.url?.startsWith('/huge/')) {
          res.writeHead(200).end();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(HUGE_BODY_BYTES) });
        res.write(Buffer.alloc(64 * 1024));
        this.open.push(res);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  to(path: string) {
    return this.deliveries.filter((d) => d.path === path);
  }

  /** The distinct runs delivered to `path`. */
  runsAt(path: string): Set<string> {
    return new Set(this.to(path).map((d) => String(d.body.run_id)));
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe.each(['memory', 'redis'] as const)('webhooks of stateless runs on %s', (backend) => {
  let redis: TestRedis | undefined;
  let api: TestApi;
  /** On Redis, the worker process that executes runs and delivers webhooks (embedded: the API does). */
  let worker: AgentProcess | undefined;
  const receiver = new Receiver();

  beforeAll(async () => {
    await receiver.start();
    if (backend === 'redis') redis = await startRedis();
    const env = { SERVICE_LANGGRAPH_JSON: GRAPHS, SERVICE_WEBHOOK_ALLOW_PRIVATE: 'true', SERVICE_WEBHOOK_BACKOFF_MS: '50', SERVICE_WEBHOOK_TIMEOUT_MS: String(ATTEMPT_TIMEOUT_MS) };
    api = await startTestApi({ ...(redis ? { redisUrl: redis.url } : {}), env, agents: await loadAgentsAndGraphs(loadConfig(env), undefined, createLogger('silent')) });
    expect(api.backend.mode).toBe(backend);
    if (redis) worker = await startRunWorker(redis.url, api, env);
    else api.composition.startExecuting();
  }, 180_000);

  afterAll(async () => {
    await receiver.stop();
    const code = await worker?.stop();
    await api?.close();
    await redis?.stop();
    expect(code ?? 0).toBe(0);
  }, 60_000);

  /** The log lines of the process that delivers webhooks. */
  const deliveryLogs = (): Record<string, unknown>[] => (worker ? worker.lines.flatMap((line) => (line.json ? [line.json] : [])) : api.logs);

  /** Waits until `path` has `count` runs' deliveries; fails with how many it has. */
  const allDelivered = async (path: string, count: number): Promise<void> => {
    await waitFor(`${count} deliveries to ${path}`, () => receiver.runsAt(path).size >= count, 60_000).catch(() => undefined);
    expect(receiver.runsAt(path).size, `runs whose webhook reached ${path}`).toBe(count);
  };

  /** Waits until a delivered run's thread and run are gone. */
  const gone = (delivery: { body: any }) =>
    waitFor(`thread ${delivery.body.thread_id} and run ${delivery.body.run_id} deleted`, async () => {
      const [session, run] = await Promise.all([
        api.backend.store.sessions.getSession(DEFAULT_TENANT, delivery.body.thread_id),
        api.backend.store.runs.getRun(DEFAULT_TENANT, delivery.body.run_id),
      ]);
      return session === null && run === null;
    });

  const runBody = (path: string, extra: Record<string, unknown> = {}) => ({ assistant_id: 'promised', input: { word: 'hi' }, webhook: receiver.url(path), ...extra });

  for (const onCompletion of ['delete', 'keep', undefined] as const) {
    it(`delivers the webhook of each of ${CONCURRENT_WAITS} concurrent POST /runs/wait (on_completion ${onCompletion ?? 'by default'})`, async () => {
      const path = `/wait-${onCompletion ?? 'default'}/${backend}`;
      const answers = await Promise.all(
        Array.from({ length: CONCURRENT_WAITS }, () => call(`${api.url}/runs/wait`, { method: 'POST', json: runBody(path, onCompletion ? { on_completion: onCompletion } : {}) })),
      );
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
      await allDelivered(path, CONCURRENT_WAITS);
      const deliveries = receiver.to(path);
      expect(deliveries.filter((d) => d.body.status !== 'success').map((d) => d.body)).toEqual([]);
      if (onCompletion === 'keep') {
        for (const d of deliveries) expect(await api.backend.store.sessions.getSession(DEFAULT_TENANT, d.body.thread_id)).not.toBeNull();
      } else {
        for (const d of deliveries) await gone(d);
      }
    }, 120_000);
  }

  it(`delivers the webhook of each of ${CONCURRENT_STREAMS} concurrent POST /runs/stream, and deletes their threads`, async () => {
    const path = `/stream/${backend}`;
    const streams = await Promise.all(
      Array.from({ length: CONCURRENT_STREAMS }, async () => {
        const response = await fetch(`${api.url}/runs/stream`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(runBody(path)) });
        return { status: response.status, text: await response.text() };
      }),
    );
    expect(streams.map((s) => s.status)).toEqual(streams.map(() => 200));
    await allDelivered(path, CONCURRENT_STREAMS);
    for (const d of receiver.to(path)) await gone(d);
  }, 120_000);

  it('serves POST /runs: a stateless background run, pending, its webhook delivered and its thread deleted once it ended', async () => {
    const path = `/background/${backend}`;
    const created = await call(`${api.url}/runs`, { method: 'POST', json: runBody(path, { metadata: { origin: 'background' } }) });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ thread_id: expect.any(String), assistant_id: expect.any(String), metadata: { origin: 'background' } });
    // Pending as it was created; embedded, its worker may have taken it already.
    expect(['pending', 'running', 'success']).toContain(created.body.status);
    expect(created.headers.get('content-location')).toBe(`/runs/${created.body.run_id}`);
    await allDelivered(path, 1);
    const [delivery] = receiver.to(path);
    expect(delivery!.body).toMatchObject({ run_id: created.body.run_id, thread_id: created.body.thread_id, status: 'success', values: { word: 'hi', echoed: 'promised hi' } });
    await gone(delivery!);
  }, 60_000);

  it('keeps the thread of POST /runs with on_completion keep', async () => {
    const path = `/background-keep/${backend}`;
    const created = await call(`${api.url}/runs`, { method: 'POST', json: runBody(path, { on_completion: 'keep' }) });
    expect(created.status).toBe(200);
    const { run_id: runId, thread_id: threadId } = created.body;
    expect(created.headers.get('content-location')).toBe(`/threads/${threadId}/runs/${runId}`);
    await allDelivered(path, 1);
    const run = await call(`${api.url}/threads/${threadId}/runs/${runId}`);
    expect(run.body).toMatchObject({ run_id: runId, status: 'success' });
  }, 60_000);

  it('counts a 200 as delivered at once, however large a body the receiver answers with: one delivery, never timed out', async () => {
    const path = `/huge/${backend}`;
    const answer = await call(`${api.url}/runs/wait`, { method: 'POST', json: runBody(path, { on_completion: 'keep' }) });
    expect(answer.status).toBe(200);
    const runId = answer.headers.get('content-location')!.split('/').at(-1);
    const line = await waitFor(`the delivery of run ${runId} logged`, () =>
      deliveryLogs().find((l) => String(l.msg).startsWith('run webhook') && l.run_id === runId && l.msg !== 'run webhook attempt failed: no answer'),
    );
    expect(line).toMatchObject({ msg: 'run webhook delivered', status: 200, attempt: 1 });
    expect(deliveryLogs().filter((l) => l.run_id === runId && String(l.msg).startsWith('run webhook attempt failed'))).toEqual([]);
    expect(receiver.to(path)).toHaveLength(1);
  }, 60_000);
});
