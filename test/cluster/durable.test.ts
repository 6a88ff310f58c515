import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { replicaPorts, startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';
import { startPrivateRedis, uniquePrefix, type PrivateRedis } from '../support/redis.js';
import { monitorRedis } from '../support/redis-monitor.js';
import { waitFor } from '../support/wait.js';

/**
 * REDIS_WAIT_REPLICAS: a run, an approval decision and a checkpoint patch are acknowledged only
 * once the replicas have them (Redis WAIT, on each connection that wrote), and answer 503 when
 * they do not confirm in REDIS_WAIT_TIMEOUT_MS. Real servers: a master with one replica, and a
 * Redis Cluster whose tenant and queue live on different masters; a replica stopped (SIGSTOP)
 * acknowledges nothing.
 */
const TIMEOUT_MS = 500;
const durable = { REDIS_WAIT_REPLICAS: '1', REDIS_WAIT_TIMEOUT_MS: String(TIMEOUT_MS) };

/** An admin client of one server, disconnected when the test ends. */
function admin(port: number, password?: string): Redis {
  const client = new Redis({ host: '127.0.0.1', port, ...(password ? { password } : {}), maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  onTestFinished(() => client.disconnect());
  return client;
}

/** Commands a server received, as MONITOR shows them: the sending client's address and the arguments. */
interface Seen {
  source: string;
  args: string[];
}

async function monitor(port: number): Promise<Seen[]> {
  const seen: Seen[] = [];
  const client = await monitorRedis(port);
  onTestFinished(() => client.disconnect());
  client.on('monitor', (_time: string, args: string[], source: string) => seen.push({ source, args: args.map(String) }));
  return seen;
}

/** `addr` of every client named `agentplane:<name>` on the server. */
async function addressesOf(client: Redis, name: string): Promise<string[]> {
  const list = String(await client.client('LIST'));
  return list
    .split('\n')
    .filter((line) => line.includes(` name=agentplane:${name} `))
    .map((line) => /\baddr=(\S+)/.exec(line)![1]!);
}

/**
 * True once one connection named `agentplane:<name>` ran a script carrying `marker` (the run's
 * write) and then WAIT `1 <timeout>`: the WAIT went over the connection that wrote.
 */
async function waitedAfterWrite(server: Redis, seen: Seen[], name: string, marker: string): Promise<boolean> {
  for (const addr of await addressesOf(server, name)) {
    const commands = seen.filter((s) => s.source === addr);
    const write = commands.findIndex((s) => /^eval/i.test(s.args[0]!) && s.args.join(' ').includes(marker));
    if (write === -1) continue;
    if (commands.slice(write + 1).some((s) => /^wait$/i.test(s.args[0]!) && s.args[1] === '1' && s.args[2] === String(TIMEOUT_MS))) return true;
  }
  return false;
}

/** Resolves once the master's replicas have everything it wrote. */
async function caughtUp(master: Redis, replicas = 1): Promise<void> {
  await waitFor('the replicas to catch up with the master', async () => {
    const info = await master.info('replication');
    const offset = Number(/^master_repl_offset:(\d+)/m.exec(info)?.[1]);
    const offsets = [...info.matchAll(/^slave\d+:.*\bstate=online,offset=(\d+)/gm)].map((m) => Number(m[1]));
    return offsets.length === replicas && offsets.every((o) => o === offset);
  });
}

async function ready(app: TestApi): Promise<void> {
  await waitFor('the API to be ready', async () => (await call(`${app.url}/health/ready`)).status === 200);
}

/** POST /api/runs of the echo agent: the answer and how long it took (ms). */
async function startRun(app: TestApi, headers: Record<string, string> = {}, session?: string): Promise<{ status: number; body: any; headers: Headers; ms: number }> {
  const began = Date.now();
  const answer = await call(`${app.url}/api/runs`, { method: 'POST', headers, json: { agent_id: 'echo', input: { text: 'hi' }, ...(session ? { session_id: session } : {}) } });
  return { ...answer, ms: Date.now() - began };
}

function expectUnconfirmed(answer: { status: number; body: any; headers: Headers; ms?: number }): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(503);
  expect(answer.body.error.code).toBe('unavailable');
  expect(answer.body.error.message).toMatch(/not confirmed by Redis replicas/);
  expect(answer.headers.get('retry-after')).toBe('1');
  // WAIT waited its timeout (a busy machine only adds to that), and gave up by itself: a WAIT
  // ended by the request timeout (SERVICE_REQUEST_TIMEOUT_MS) would answer 408, not this 503.
  if (answer.ms !== undefined) expect(answer.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
}

describe('settings', () => {
  const variableOf = (env: Record<string, string>): string => {
    try {
      loadConfig(env);
    } catch (error) {
      if (error instanceof ConfigError) return error.variable;
      throw error;
    }
    throw new Error('expected a ConfigError');
  };

  it('reads REDIS_WAIT_REPLICAS and REDIS_WAIT_TIMEOUT_MS in every mode, nothing for 0 or the embedded mode, and refuses bad values', () => {
    expect(loadConfig({ REDIS_URL: 'redis://a:6379', REDIS_WAIT_REPLICAS: '1' }).redis).toEqual({ mode: 'single', url: 'redis://a:6379', wait: { replicas: 1, timeoutMs: 1000 } });
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'a:6379', REDIS_WAIT_REPLICAS: '2', REDIS_WAIT_TIMEOUT_MS: '250' }).redis?.wait).toEqual({ replicas: 2, timeoutMs: 250 });
    expect(loadConfig({ REDIS_SENTINELS: 's:26379', REDIS_WAIT_REPLICAS: '1' }).redis?.wait).toEqual({ replicas: 1, timeoutMs: 1000 });
    expect(loadConfig({ REDIS_URL: 'redis://a:6379', REDIS_WAIT_REPLICAS: '0', REDIS_WAIT_TIMEOUT_MS: '250' }).redis).toEqual({ mode: 'single', url: 'redis://a:6379' });
    expect(loadConfig({ REDIS_WAIT_REPLICAS: '1' }).redis).toBeUndefined();
    expect(variableOf({ REDIS_URL: 'redis://a:6379', REDIS_WAIT_REPLICAS: '-1' })).toBe('REDIS_WAIT_REPLICAS');
    expect(variableOf({ REDIS_URL: 'redis://a:6379', REDIS_WAIT_REPLICAS: 'one' })).toBe('REDIS_WAIT_REPLICAS');
    expect(variableOf({ REDIS_URL: 'redis://a:6379', REDIS_WAIT_REPLICAS: '1', REDIS_WAIT_TIMEOUT_MS: '0' })).toBe('REDIS_WAIT_TIMEOUT_MS');
  });
});

describe('a master and its replica (REDIS_URL)', () => {
  let master: PrivateRedis;
  let replica: PrivateRedis;
  // Where the replica writes the RDB of its full sync.
  const dir = mkdtempSync(join(tmpdir(), 'agentplane-durable-'));

  beforeAll(async () => {
    master = await startPrivateRedis({ args: ['--dir', dir] });
    replica = await startPrivateRedis({ args: ['--dir', dir, '--replicaof', '127.0.0.1', String(master.port)] });
    const client = new Redis({ port: master.port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
    try {
      await waitFor('the replica to be online', async () => replicaPorts(await client.info('replication')).includes(replica.port));
    } finally {
      client.disconnect();
    }
  }, 30_000);
  afterAll(async () => {
    await replica?.stop();
    await master?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const startApi = async (env: Record<string, string> = {}) => {
    const app = await startTestApi({ redisUrl: master.url, env });
    onTestFinished(() => app.close());
    await ready(app);
    return app;
  };

  it('sends no WAIT when REDIS_WAIT_REPLICAS is not set', async () => {
    const app = await startApi();
    const server = admin(master.port);
    await server.config('RESETSTAT');
    expect((await startRun(app)).status).toBe(202);
    expect(await server.info('commandstats')).not.toMatch(/^cmdstat_wait:/m);
  });

  it('WAITs after a run is created on the store connection and after its job is added on the queue connection, then answers 202', async () => {
    const app = await startApi(durable);
    const server = admin(master.port);
    const seen = await monitor(master.port);
    await server.config('RESETSTAT');
    const answer = await startRun(app);
    expect(answer.status).toBe(202);
    // Both WAITs were answered before the 202: nothing else sends WAIT.
    expect(await server.info('commandstats')).toMatch(/^cmdstat_wait:calls=2,/m);
    const runId: string = answer.body.run_id;
    await waitFor('WAIT after the run was written, on the store connection', () => waitedAfterWrite(server, seen, 'commands', runId));
    await waitFor('WAIT after the job was added, on the queue connection', () => waitedAfterWrite(server, seen, 'queue', runId));
  });

  it('answers 503 unavailable (Retry-After) after about REDIS_WAIT_TIMEOUT_MS while the replica acknowledges nothing, and 202 once it does again', async () => {
    const app = await startApi(durable);
    const server = admin(master.port);
    const first = await startRun(app);
    expect(first.status).toBe(202);
    const session: string = first.body.session_id;
    replica.pause();
    try {
      expectUnconfirmed(await startRun(app));
      // A checkpoint patch too (the session's run is queued, not running: the patch applies).
      const began = Date.now();
      const patch = await call(`${app.url}/api/sessions/state?session_id=${session}`, { method: 'POST', json: { state: { edited: true } } });
      expectUnconfirmed({ ...patch, ms: Date.now() - began });
    } finally {
      replica.resume();
    }
    // Said in the log (at most a line per 10 s).
    expect(app.logs.filter((l) => /answered 503: the Redis replicas did not confirm/.test(String(l.msg)))).toHaveLength(1);
    // And counted, each of them: the run start and the patch.
    const metrics = await call(`${app.url}/metrics`);
    expect(metrics.body).toMatch(/^agentplane_redis_unconfirmed_writes_total 2$/m);
    await caughtUp(server);
    expect((await startRun(app)).status).toBe(202);
    const patch = await call(`${app.url}/api/sessions/state?session_id=${session}`, { method: 'POST', json: { state: { edited: 'again' } } });
    expect(patch.status).toBe(200);
  });

  it('answers 503 to an approval decision the replica does not confirm, after queuing its resume: the decision stays and the run completes', async () => {
    const app = await startApi(durable);
    app.composition.startExecuting();
    const server = admin(master.port);
    const started = await call(`${app.url}/api/runs`, { method: 'POST', json: { agent_id: 'human-review', input: { topic: 'wait' } } });
    expect(started.status).toBe(202);
    const { run_id: runId } = started.body;
    const approvalId = await waitFor('the run to wait for its approval', async () => {
      const run = await call(`${app.url}/api/runs/${runId}`);
      return run.body?.status === 'interrupted' && (run.body.approval_id as string);
    });
    replica.pause();
    try {
      const began = Date.now();
      const decided = await call(`${app.url}/api/approval/respond`, { method: 'POST', json: { id: approvalId, approved: true, comment: 'go' } });
      expectUnconfirmed({ ...decided, ms: Date.now() - began });
    } finally {
      replica.resume();
    }
    await caughtUp(server);
    // The master kept the decision (a retry is refused as decided) and its resume was queued
    // before the 503: the run goes on by itself.
    expect((await call(`${app.url}/api/approval/respond`, { method: 'POST', json: { id: approvalId, approved: true } })).status).toBe(409);
    const done = await waitFor('the approved run to complete', async () => {
      const run = await call(`${app.url}/api/runs/${runId}`);
      return ['completed', 'failed', 'cancelled'].includes(run.body?.status) && run.body;
    });
    expect(done.status).toBe('completed');
  });
});

describe('a Redis Cluster: a tenant on one master, the queues on another', () => {
  let cluster: TestRedisCluster;
  let prefix: string;
  let tenant: string;
  const headers = { 'X-Api-Key': 'key-durable-4c1e' };

  beforeAll(async () => {
    cluster = await startRedisCluster();
    prefix = uniquePrefix('durable');
    // The second name's master is not the one of the queues ({prefix}).
    tenant = (await cluster.namesOnDistinctMasters('tenant', 2, `{${prefix}}`))[1]!;
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('WAITs on the master of each slot written, over the connection that wrote it, and answers 503 when either master\'s replica does not confirm', async () => {
    const app = await startTestApi({
      env: { REDIS_CLUSTER_NODES: cluster.nodes, SERVICE_KEY_PREFIX: prefix, SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: `${headers['X-Api-Key']}:user:${tenant}`, ...durable },
      secured: true,
    });
    onTestFinished(() => app.close());
    await ready(app);
    const tenantMaster = await cluster.masterOf(tenant);
    const queueMaster = await cluster.masterOf(`{${prefix}}`);
    expect(tenantMaster).not.toBe(queueMaster);

    const onTenant = admin(tenantMaster);
    const onQueue = admin(queueMaster);
    const seenOnTenant = await monitor(tenantMaster);
    const seenOnQueue = await monitor(queueMaster);
    const answer = await startRun(app, headers);
    expect(answer.status, JSON.stringify(answer.body)).toBe(202);
    const runId: string = answer.body.run_id;
    await waitFor('WAIT on the tenant\'s master after the run was written', () => waitedAfterWrite(onTenant, seenOnTenant, 'commands', runId));
    await waitFor('WAIT on the queues\' master after the job was added', () => waitedAfterWrite(onQueue, seenOnQueue, 'queue', runId));

    // Each master's replica in turn acknowledges nothing: either one makes the run unconfirmed.
    for (const master of [tenantMaster, queueMaster]) {
      const [replicaPort] = await cluster.replicasOf(master);
      const replica = cluster.servers.find((s) => s.port === replicaPort)!;
      replica.pause();
      try {
        expectUnconfirmed(await startRun(app, headers));
      } finally {
        replica.resume();
      }
      await caughtUp(admin(master));
    }
    expect((await startRun(app, headers)).status).toBe(202);
  });
});
