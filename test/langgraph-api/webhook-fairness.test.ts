import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/app.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/**
 * Run webhook deliveries are shared fairly between tenants (issue 32, item 8): a tenant whose
 * receiver hangs holds at most WORKER_WEBHOOK_PER_TENANT of a worker's
 * WORKER_WEBHOOK_CONCURRENCY delivery slots, so another tenant's delivery is made while the
 * first one's are all still hanging; the deferred deliveries are made later, at their first
 * attempt. The experiment of the issue, scaled down: 4 slots, 2 per tenant, 20 of tenant A's runs
 * at a receiver that holds every request, then one run of tenant B. Attempts are bounded by
 * 60 s here (SERVICE_WEBHOOK_TIMEOUT_MS): B's delivery must not wait for one of A's to time out.
 */

const SLOTS = 4;
const PER_TENANT = 2;
const A_RUNS = 20;
const ATTEMPT_TIMEOUT_MS = 60_000;

/** Holds every request to `/hold/…` while `holding`; answers everything else (and `/hold/…` afterwards) 200. */
class Receiver {
  readonly seen: { path: string; at: number }[] = [];
  holding = true;
  private readonly held: ServerResponse[] = [];
  private server!: Server;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        this.seen.push({ path: req.url ?? '', at: Date.now() });
        if (this.holding && req.url?.startsWith('/hold/')) this.held.push(res);
        else res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  to(path: string) {
    return this.seen.filter((s) => s.path === path);
  }

  /** Stops holding and answers every held request 200. */
  release(): void {
    this.holding = false;
    for (const res of this.held.splice(0)) res.writeHead(200).end();
  }

  async stop(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe.each(['memory', 'redis'] as const)('run webhook slots shared between tenants on %s', (backend) => {
  let redis: TestRedis | undefined;
  let app: TestApi;
  const receiver = new Receiver();

  beforeAll(async () => {
    await receiver.start();
    if (backend === 'redis') redis = await startRedis();
    app = await startTestApi({
      ...(redis ? { redisUrl: redis.url } : {}),
      env: {
        SERVICE_WEBHOOK_ALLOW_PRIVATE: 'true',
        SERVICE_WEBHOOK_BACKOFF_MS: '50',
        SERVICE_WEBHOOK_TIMEOUT_MS: String(ATTEMPT_TIMEOUT_MS),
        WORKER_WEBHOOK_CONCURRENCY: String(SLOTS),
        WORKER_WEBHOOK_PER_TENANT: String(PER_TENANT),
      },
    });
    expect(app.backend.mode).toBe(backend);
    app.composition.startExecuting();
  });

  afterAll(async () => {
    receiver.release();
    await app?.close();
    await redis?.stop();
    await receiver.stop();
  });

  const delivered = (runId: string) =>
    waitFor(`the delivery of run ${runId}`, () => app.logs.find((line) => line.msg === 'run webhook delivered' && line.run_id === runId), 20_000);

  it('delivers tenant B’s webhook while tenant A’s receiver holds A’s deliveries, and A’s deferred ones later at their first attempt', async () => {
    const hold = `/hold/${backend}`;
    const aRuns = [];
    for (let i = 0; i < A_RUNS; i += 1) {
      aRuns.push(await app.composition.runs.startRun('TenantA', { agent_id: 'echo', input: { i }, webhook: receiver.url(hold) }));
    }
    // A's receiver now holds as many of A's deliveries as A may have at once.
    await waitFor(`${PER_TENANT} of tenant A’s deliveries held`, () => receiver.to(hold).length >= PER_TENANT);

    const bPath = `/ok/${backend}`;
    const b = await app.composition.runs.startRun('TenantB', { agent_id: 'echo', input: {}, webhook: receiver.url(bPath) });
    await waitFor('tenant B’s delivery', () => receiver.to(bPath).length === 1, 20_000);
    await delivered(b.run_id);
    // B's delivery did not wait for a slot A holds: it came while every one of A's attempts was
    // still held (checked below: none answered, none timed out, no log line of A's webhooks yet).

    // Every one of A's attempts is still hanging: none answered, none timed out, and A never held more than its share.
    expect(receiver.to(hold).length).toBeLessThanOrEqual(PER_TENANT);
    expect(app.logs.filter((line) => line.tenant === 'TenantA' && String(line.msg).startsWith('run webhook'))).toEqual([]);

    receiver.release();
    for (const run of aRuns) {
      const line = await delivered(run.run_id);
      // Waiting for a slot spent no attempt.
      expect(line.attempt).toBe(1);
    }
    expect(receiver.to(hold)).toHaveLength(A_RUNS);
  }, 60_000);
});
