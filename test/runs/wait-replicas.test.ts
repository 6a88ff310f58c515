import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { compareEventIds } from '../../src/domain/event-ids.js';
import { call } from '../support/app.js';
import { startProcess, type AgentProcess } from '../support/processes.js';
import { startPrivateRedis, uniquePrefix, type PrivateRedis } from '../support/redis.js';
import { monitorRedis } from '../support/redis-monitor.js';
import { waitFor } from '../support/wait.js';
import { eventsOf, openRaw } from '../support/sse.js';
import { cancelActiveOnFinish, cancelRun, openRunStream, postWait, respond, sessionRun, within } from './wait.js';
import { brief } from '../support/events.js';

/**
 * The local ports of the established TCP connections process `pid` holds to `port` on this
 * host, from /proc (Linux): its socket inodes matched against /proc/net/tcp.
 */
function connectionsOf(pid: number, port: number): Set<number> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const socket = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (socket) inodes.add(socket[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const columns = line.trim().split(/\s+/);
      if (columns.length < 10) continue;
      const [, local, remote, state] = columns as [string, string, string, string];
      const remotePort = parseInt(remote.split(':').at(-1)!, 16);
      // 01: ESTABLISHED
      if (state === '01' && remotePort === port && inodes.has(columns[9]!)) ports.add(parseInt(local.split(':').at(-1)!, 16));
    }
  }
  return ports;
}

/** One command Redis executed, as MONITOR reports it. */
interface Monitored {
  time: number;
  args: string[];
  /** `ip:port` of the client, or `lua` for commands of a script. */
  source: string;
}

const portOf = (source: string) => Number(source.split(':').at(-1));

describe('run waits across two API processes and a worker process', () => {
  let redis: PrivateRedis;
  let a: AgentProcess;
  let b: AgentProcess;
  let worker: AgentProcess;
  const clients: Redis[] = [];

  const api = (replica: string, prefix: string) =>
    startProcess({
      entry: 'src/main/api.ts',
      env: {
        REDIS_URL: redis.url,
        SERVICE_KEY_PREFIX: prefix,
        SERVICE_REPLICA_ID: replica,
        AGENTS_MODULE: 'test/fixtures/agents.ts',
        SERVICE_SHUTDOWN_DELAY_MS: '0',
        LOG_LEVEL: 'warn',
      },
    });

  beforeAll(async () => {
    redis = await startPrivateRedis();
    const prefix = uniquePrefix('wait-replicas');
    [a, b, worker] = await Promise.all([
      api('replica-a', prefix),
      api('replica-b', prefix),
      startProcess({
        entry: 'src/main/worker.ts',
        portVariable: 'WORKER_PORT',
        env: {
          REDIS_URL: redis.url,
          SERVICE_KEY_PREFIX: prefix,
          AGENTS_MODULE: 'test/fixtures/agents.ts',
          WAIT_NODE_MS: '600000',
          // Lock renewals every half second: the clock the MONITOR window below closes on.
          WORKER_STALLED_INTERVAL_MS: '1000',
          LOG_LEVEL: 'warn',
        },
      }),
    ]);
  });
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    const codes = await Promise.all([worker, b, a].map((p) => p?.stop()));
    await redis?.stop();
    expect(codes).toEqual([0, 0, 0]);
  });

  const connect = () => {
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    clients.push(client);
    return client;
  };

  it('human-review waited on through A answers interrupted with the approval; respond with wait_ms through B answers it completed', async () => {
    const waited = await postWait(a.url, { agent_id: 'human-review', input: { topic: 'replicas' }, wait_ms: 20_000 });
    expect(waited.status, JSON.stringify(waited.body)).toBe(200);
    expect(waited.headers.get('x-served-by')).toBe('replica-a');
    const run = waited.body;
    expect(run).toMatchObject({ status: 'interrupted', approval: { id: run.approval_id, prompt: 'Publish the draft?', node_id: 'review' } });
    expect(run.state).toMatchObject({ topic: 'replicas', draft: 'Draft: replicas' });

    const answer = await respond(b.url, { id: run.approval_id, approved: true, comment: 'from B', wait_ms: 20_000 });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.headers.get('x-served-by')).toBe('replica-b');
    expect(answer.body).toMatchObject({ id: run.approval_id, status: 'approved', run: { id: run.id, status: 'completed' } });
    expect(answer.body.run.state).toMatchObject({ comment: 'from B', outcome: 'published', approved: true });
    expect((await call(`${a.url}/api/runs/${run.id}`)).body.status).toBe('completed');
  });

  it('a run streamed from A up to its approval is resumed on B with Last-Event-ID, without gap or duplicate', async () => {
    const stream = await openRunStream(a.url, { agent_id: 'human-review', input: { topic: 'resume' } });
    onTestFinished(() => stream.destroy());
    expect(stream.status, stream.text()).toBe(200);
    await within('the run stream to end at interrupted', stream.ended);
    const first = eventsOf(stream.frames);
    expect(first.map((e) => brief(e.event))).toEqual(['node_start:draft', 'node_end:draft:ok', 'node_start:review', 'interrupted:review']);
    const last = first.at(-1)!;
    const session = stream.headers['x-session-id'] as string;

    const onB = await openRaw(`${b.url}/api/events/stream?session=${session}`, { 'Last-Event-ID': last.id });
    onTestFinished(() => onB.destroy());
    const answer = await respond(b.url, { id: last.event.approval_id!, approved: false, wait_ms: 20_000 });
    expect(answer.body.run).toMatchObject({ status: 'completed', state: { outcome: 'discarded' } });
    await onB.waitForFrames((f) => eventsOf(f).some((e) => e.event.type === 'completed'), 'completed on B');
    const rest = eventsOf(onB.frames);
    expect(rest.map((e) => brief(e.event))).toEqual([
      'approval_decided',
      'node_start:review',
      'node_end:review:ok',
      'node_start:discard',
      'node_end:discard:ok',
      'completed',
    ]);
    const all = [...first, ...rest];
    for (let i = 1; i < all.length; i += 1) expect(compareEventIds(all[i]!.id, all[i - 1]!.id)).toBeGreaterThan(0);
    expect(all.every((e) => e.event.run_id === stream.headers['x-run-id'])).toBe(true);
  });

  it('a held wait costs its API process no Redis command: nothing but the subscription while the worker keeps the run’s lock six times (MONITOR)', async () => {
    const session = `s-${randomUUID()}`;
    cancelActiveOnFinish(b.url, session);
    let settled = false;
    const waiting = postWait(a.url, { agent_id: 'waiter', session_id: session, input: {}, wait_ms: 30_000 }).finally(() => (settled = true));
    const run = await sessionRun(b.url, session, 'running');

    // A's connections, named by the backend (agentplane:commands, agentplane:subscriber, …).
    const ports = connectionsOf(a.pid, redis.port);
    const admin = connect();
    const list = ((await admin.client('LIST')) as string).split('\n').filter(Boolean);
    const names = list
      .map((line) => Object.fromEntries(line.split(' ').map((pair) => pair.split('=', 2) as [string, string])))
      .filter((client) => ports.has(portOf(client.addr ?? '')))
      .map((client) => client.name);
    expect(names).toEqual(expect.arrayContaining(['agentplane:commands', 'agentplane:subscriber']));

    const seen: Monitored[] = [];
    const monitor = await monitorRedis(redis.url);
    onTestFinished(() => monitor.disconnect());
    monitor.on('monitor', (time: string, args: string[], source: string) => seen.push({ time: Number(time), args, source }));
    // The window runs from one marker command to another, both seen by MONITOR, 2 s apart.
    const mark = async () => {
      const marker = `window-${randomUUID()}`;
      await admin.echo(marker);
      await waitFor('MONITOR to report the marker', () => seen.some((c) => c.args.includes(marker)), 5_000);
      return seen.findIndex((c) => c.args.includes(marker));
    };
    const from = await mark();
    // The window is the measurement: a wait that polled (the run, its events) would show here. It
    // closes behind the worker's own clock, not a sleep of the test's: six rounds of the worker's
    // lock keeping (its scripts extending the run's lock or checking for stalled jobs, each a
    // half second apart here; the commands inside a script are reported too, so scripts count).
    const lockRounds = () => seen.slice(from + 1).filter((c) => !ports.has(portOf(c.source)) && /^eval/i.test(c.args[0] ?? '') && c.args.some((arg) => arg.endsWith(':stalled'))).length;
    await waitFor("six rounds of the worker's lock keeping", () => lockRounds() >= 6, 20_000);
    const to = await mark();
    const window = seen.slice(from + 1, to);
    const after = connectionsOf(a.pid, redis.port);
    const ofA = (commands: Monitored[]) => commands.filter((c) => ports.has(portOf(c.source)) || after.has(portOf(c.source)));
    expect(settled).toBe(false);
    expect([...after].sort()).toEqual([...ports].sort());
    expect(ofA(window).map((c) => c.args.join(' '))).toEqual([]);
    // The filter sees A's commands: a request to A is there at once.
    const probeFrom = seen.length;
    expect((await call(`${a.url}/api/runs/${run.id}`)).body.status).toBe('running');
    await waitFor("MONITOR to report A's reads", () => ofA(seen.slice(probeFrom)).length > 0, 5_000);

    const cancelled = await cancelRun(b.url, run.id);
    expect(cancelled.status).toBe(200);
    const response = await waiting;
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ id: run.id, status: 'cancelled' });
  });

  it('SIGTERM of A answers its held wait 202 with the run as it stands and ends its run stream; A exits 0', async () => {
    const held = `s-${randomUUID()}`;
    const streamed = `s-${randomUUID()}`;
    cancelActiveOnFinish(b.url, held);
    cancelActiveOnFinish(b.url, streamed);
    const waiting = postWait(a.url, { agent_id: 'waiter', session_id: held, input: {}, wait_ms: 60_000 });
    const stream = await openRunStream(a.url, { agent_id: 'waiter', session_id: streamed, input: {} });
    onTestFinished(() => stream.destroy());
    expect(stream.status, stream.text()).toBe(200);
    const runs = await Promise.all([sessionRun(b.url, held, 'running'), sessionRun(b.url, streamed, 'running')]);
    await waitFor('the stream to carry node_start wait', () => eventsOf(stream.frames).some((e) => brief(e.event) === 'node_start:wait'), 10_000);

    a.signal('SIGTERM');
    const response = await within('the held wait to be answered', waiting);
    expect(response.status, JSON.stringify(response.body)).toBe(202);
    expect(response.body).toMatchObject({ id: runs[0]!.id, session_id: held, status: 'running' });
    expect(response.body.state).toBeUndefined();
    await within('the run stream to end', stream.ended);
    expect(stream.finished()).toBe(true);
    expect(eventsOf(stream.frames).map((e) => brief(e.event))).toEqual(['node_start:wait']);
    expect(await within('A to exit', a.exited)).toBe(0);

    for (const run of runs) {
      expect((await call(`${b.url}/api/runs/${run.id}`)).body.status).toBe('running');
      const cancelled = await cancelRun(b.url, run.id);
      expect(cancelled.body).toMatchObject({ id: run.id, status: 'cancelled' });
    }
  });
});
