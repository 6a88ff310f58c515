import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../support/app.js';
import { startCluster, type Cluster } from '../../support/cluster.js';
import { brief } from '../../support/events.js';
import { watch, type Received } from '../../support/sse.js';
import { waitFor } from '../../support/wait.js';

/**
 * The deployment topology on loopback: a private Redis, three API replicas, two workers and
 * nginx with deploy/nginx/agentplane.conf. Every request goes through nginx.
 */
let cluster: Cluster;
/** Bound of a test that restarts APIs: each start compiles the sources with tsx, slow on a loaded machine. */
const RESTARTS_MS = 300_000;

// Three processes and more, each compiling the sources with tsx: minutes on a loaded 2-core machine.
beforeAll(async () => {
  cluster = await startCluster({ apis: 3, workers: 2 });
}, 300_000);
afterAll(async () => {
  await cluster?.stop();
}, 120_000);

/** Repeats an idempotent-for-the-test request until a replica outside `avoid` answers it. */
async function servedElsewhere(
  avoid: string[],
  request: () => Promise<{ status: number; headers: Headers; body: any }>,
): Promise<{ status: number; headers: Headers; body: any; replica: string }> {
  return waitFor(`a replica other than ${avoid.join(', ')}`, async () => {
    const response = await request();
    const replica = response.headers.get('x-served-by') ?? '?';
    return avoid.includes(replica) ? undefined : { ...response, replica };
  });
}

function eventsOf(events: Received[], session: string): Received[] {
  return events.filter((e) => e.event.session === session);
}

function expectNoGapsOrDuplicates(events: Received[]): void {
  const ids = events.map((e) => e.id);
  expect(new Set(ids).size).toBe(ids.length);
}

describe('through nginx', () => {
  it('runs the human-review flow with the stream, the run, the approval and the reads on different replicas', async () => {
    const stream = watch(`${cluster.url}/api/events/stream`);
    try {
      await stream.waitForOpen();
      const sseReplica = stream.servedBy[0]!;
      const started = await servedElsewhere([sseReplica], () =>
        call(`${cluster.url}/api/runs`, { method: 'POST', json: { agent_id: 'human-review', input: { topic: 'cluster' } } }),
      );
      expect(started.status).toBe(202);
      const session = started.body.session_id as string;
      const interrupted = await stream.waitForEvent((e) => e.event.session === session && e.event.type === 'interrupted');
      const approvalId = interrupted.event.approval_id!;
      const pending = await servedElsewhere([sseReplica, started.replica], () => call(`${cluster.url}/api/approval/pending`));
      expect(pending.body.pending.map((a: { id: string }) => a.id)).toContain(approvalId);
      const answer = await call(`${cluster.url}/api/approval/respond`, { method: 'POST', json: { id: approvalId, approved: true } });
      expect(answer.status).toBe(200);
      await stream.waitForEvent((e) => e.event.session === session && e.event.type === 'completed');
      const state = await servedElsewhere([sseReplica, started.replica], () => call(`${cluster.url}/api/sessions/state?session_id=${session}`));
      expect(state.body.state.outcome).toBe('published');
      expect(new Set([sseReplica, started.replica, pending.replica, state.replica]).size).toBe(3);
      expect(eventsOf(stream.received, session).map((e) => brief(e.event))).toEqual([
        'node_start:draft',
        'node_end:draft:ok',
        'node_start:review',
        'interrupted:review',
        'approval_decided',
        'node_start:review',
        'node_end:review:ok',
        'node_start:publish',
        'node_end:publish:ok',
        'completed',
      ]);
      expect(answer.headers.get('x-served-by')).toMatch(/^api-\d$/);
    } finally {
      stream.close();
    }
  });

  it('survives an API replica killed with SIGKILL: the stream resumes elsewhere and misses no event', async () => {
    const stream = watch(`${cluster.url}/api/events/stream`);
    await stream.waitForOpen();
    const victim = cluster.apis.findIndex((_, i) => `api-${i + 1}` === stream.servedBy[0]);
    expect(victim).toBeGreaterThanOrEqual(0);
    try {
      const started = await call(`${cluster.url}/api/runs`, { method: 'POST', json: { agent_id: 'slow', input: {} } });
      expect(started.status).toBe(202);
      const session = started.body.session_id as string;
      await stream.waitForEvent((e) => e.event.session === session && e.event.type === 'node_start' && e.event.node === 'crawl');
      cluster.apis[victim]!.signal('SIGKILL');
      await cluster.apis[victim]!.exited;
      for (let i = 0; i < 6; i += 1) expect((await call(`${cluster.url}/api/sessions?limit=1`)).status).toBe(200);
      await stream.waitForEvent((e) => e.event.session === session && e.event.type === 'completed', 30_000);
      expect(stream.servedBy.length).toBeGreaterThanOrEqual(2);
      expect(stream.servedBy.at(-1)).not.toBe(stream.servedBy[0]);
      const received = eventsOf(stream.received, session);
      expectNoGapsOrDuplicates(received);
      expect(received.map((e) => brief(e.event))).toEqual([
        'node_start:before',
        'node_end:before:ok',
        'node_start:crawl',
        'node_end:crawl:ok',
        'node_start:after',
        'node_end:after:ok',
        'completed',
      ]);
    } finally {
      stream.close();
      await cluster.restartApi(victim);
    }
  }, RESTARTS_MS);

  it('finishes the run of a worker killed with SIGKILL on the other worker', async () => {
    const started = await call(`${cluster.url}/api/runs`, { method: 'POST', json: { agent_id: 'slow', input: {} } });
    const runId = started.body.run_id as string;
    const owner = await waitFor('the worker that took the run', () =>
      cluster.workers.find((w) => w.lines.some((l) => l.json?.msg === 'run job started' && l.json.run_id === runId)),
    );
    await waitFor('the run to be running', async () => (await call(`${cluster.url}/api/runs/${runId}`)).body.status === 'running');
    owner.signal('SIGKILL');
    await owner.exited;
    const survivor = cluster.workers.find((w) => w !== owner)!;
    await waitFor('the run to complete', async () => (await call(`${cluster.url}/api/runs/${runId}`)).body.status === 'completed', 40_000);
    expect(survivor.lines.some((l) => l.json?.msg === 'run job started' && l.json.run_id === runId)).toBe(true);
    cluster.workers.splice(cluster.workers.indexOf(owner), 1);
    await cluster.startWorker();
  });

  it('rolls a restart over every API replica while a client polls and streams: no 5xx, no event lost', async () => {
    const stream = watch(`${cluster.url}/api/events/stream`);
    await stream.waitForOpen();
    const statuses: number[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const response = await fetch(`${cluster.url}/api/sessions?limit=5`);
        statuses.push(response.status);
        await response.arrayBuffer();
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const sessions: string[] = [];
    // Every answer to a run start, kept: a write refused during the restart is a failure too.
    const starts: { status: number; body: unknown }[] = [];
    let starting = true;
    const starter = (async () => {
      while (starting) {
        const response = await call(`${cluster.url}/api/runs`, { method: 'POST', json: { agent_id: 'echo', input: {} } });
        starts.push({ status: response.status, body: response.body });
        if (response.status === 202) sessions.push(response.body.session_id);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    try {
      for (let i = 0; i < cluster.apis.length; i += 1) {
        cluster.apis[i]!.signal('SIGTERM');
        expect(await cluster.apis[i]!.exited).toBe(0);
        const restarted = await cluster.restartApi(i);
        // As a rolling update waits for the new pod to take traffic: nginx marked the old
        // process failed (max_fails=1, fail_timeout=2s), and takes the next one down only once
        // it routes the poller's requests to the restarted one again.
        await waitFor(
          'nginx to route requests to the restarted replica',
          () => restarted.lines.some((l) => l.json?.msg === 'request' && l.json.path === '/api/sessions'),
          60_000,
        );
      }
    } finally {
      starting = false;
      await starter;
      polling = false;
      await poller;
    }
    expect(statuses.length).toBeGreaterThan(20);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    // No write refused either: every run start was accepted (202), none answered 5xx or dropped.
    expect(starts.length).toBeGreaterThan(3);
    expect(starts.filter((s) => s.status !== 202), `${starts.length} run starts`).toEqual([]);
    expect(sessions).toHaveLength(starts.length);
    for (const session of sessions) {
      await stream.waitForEvent((e) => e.event.session === session && e.event.type === 'completed', 30_000).catch(async (error: Error) => {
        const runs = (await call(`${cluster.url}/api/runs?session_id=${session}`)).body;
        throw new Error(`${error.message}; runs of ${session}: ${JSON.stringify(runs)}`, { cause: error });
      });
      expect(eventsOf(stream.received, session).map((e) => brief(e.event))).toEqual([
        'node_start:receive',
        'node_end:receive:ok',
        'node_start:respond',
        'node_end:respond:ok',
        'completed',
      ]);
    }
    expectNoGapsOrDuplicates(stream.received);
    stream.close();
  }, RESTARTS_MS);
});
