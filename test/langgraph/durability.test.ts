import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/domain/types.js';
import { call } from '../support/app.js';
import { brief } from '../support/events.js';
import { startProcess, type AgentProcess, type LogLine } from '../support/processes.js';
import { startPrivateRedis, uniquePrefix, type PrivateRedis } from '../support/redis.js';
import { watch, type Watcher } from '../support/sse.js';
import { waitFor } from '../support/wait.js';

/*
 * Durability of LangGraph runs with real processes: an API and two workers on a private Redis,
 * the graphs of test/fixtures/langgraph-durable. Each node appends "<node> <pid>" to a file, so
 * the test sees which process ran which node how often. A worker SIGKILLed in the middle of a
 * graph: another worker goes on from the last superstep (the nodes before run once). A run
 * paused at an interrupt outlives every worker.
 */

const CONFIG = 'test/fixtures/langgraph-durable/langgraph.json';

let dir: string;
let logFile: string;
let releaseFile: string;
let redis: PrivateRedis | undefined;
let api: AgentProcess | undefined;
const workers: AgentProcess[] = [];
let env: Record<string, string | undefined>;
let events: Watcher | undefined;

function startWorker(): Promise<AgentProcess> {
  return startProcess({ entry: 'src/main/worker.ts', portVariable: 'WORKER_PORT', env });
}

// tsx compiles the sources at each process start: a minute and more on a loaded 2-core machine.
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agentplane-durable-'));
  logFile = join(dir, 'nodes.log');
  releaseFile = join(dir, 'release');
  redis = await startPrivateRedis();
  env = {
    REDIS_URL: redis.url,
    SERVICE_KEY_PREFIX: uniquePrefix('durable'),
    AGENTS_MODULE: undefined,
    SERVICE_LANGGRAPH_JSON: CONFIG,
    DURABLE_LOG: logFile,
    DURABLE_RELEASE: releaseFile,
    // A job whose worker died is re-delivered within seconds.
    WORKER_STALLED_INTERVAL_MS: '2000',
    LOG_LEVEL: 'info',
  };
  const [started, ...more] = await Promise.all([startProcess({ entry: 'src/main/api.ts', env }), startWorker(), startWorker()]);
  api = started;
  workers.push(...more);
  events = watch(`${api.url}/api/events/stream`);
  await events.waitForOpen();
}, 300_000);

afterAll(async () => {
  events?.close();
  await Promise.allSettled([...workers, ...(api ? [api] : [])].map((p) => p.stop()));
  await redis?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** The lines the graphs' nodes wrote, in order, of the nodes named. */
function nodeRuns(nodes: readonly string[]): { node: string; pid: number }[] {
  if (!existsSync(logFile)) return [];
  return readFileSync(logFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [node, pid] = line.split(' ');
      return { node: node!, pid: Number(pid) };
    })
    .filter((run) => nodes.includes(run.node));
}

async function startRun(agentId: string, input: Record<string, unknown>): Promise<{ run_id: string; session_id: string }> {
  const started = await call(`${api!.url}/api/runs`, { method: 'POST', json: { agent_id: agentId, input } });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  return started.body;
}

function runUntil(runId: string, status: string, timeoutMs: number): Promise<Record<string, unknown>> {
  return waitFor(
    `run ${runId} ${status}`,
    async () => {
      const { body } = await call(`${api!.url}/api/runs/${runId}`);
      return body?.status === status && body;
    },
    timeoutMs,
    100,
  );
}

/** The run's events once its `completed` event came (the status is stored before the event). */
async function eventsUntilCompleted(runId: string): Promise<RunEvent[]> {
  await events!.waitForEvent((e) => e.event.run_id === runId && e.event.type === 'completed', 15_000);
  return events!.received.map((e) => e.event).filter((e) => e.run_id === runId);
}

/**
 * The session's history oldest first, after checking seq_num runs 1..n without gap: each
 * checkpoint's node_id. One per LangGraph checkpoint: a takeover or a resume goes on from the
 * last one and adds none of its own.
 */
async function historyOf(sessionId: string): Promise<string[]> {
  const { body } = await call(`${api!.url}/api/sessions/history?session_id=${sessionId}`);
  const checkpoints = (body.checkpoints as { seq_num: number; node_id: string }[]).reverse();
  expect(checkpoints.map((c) => c.seq_num)).toEqual(checkpoints.map((_, i) => i + 1));
  return checkpoints.map((c) => c.node_id);
}

/** The session's spans as `name:status`, the root span first, its node spans in start order. */
async function spansOf(sessionId: string): Promise<string[]> {
  const { body } = await call(`${api!.url}/api/traces?session_id=${sessionId}`);
  return (body.traces as { name: string; attributes: { status: string } }[]).map((s) => `${s.name}:${s.attributes.status}`);
}

const jobStarted = (runId: string) => (line: LogLine) => line.json?.msg === 'run job started' && line.json.run_id === runId;

describe('LangGraph runs across worker deaths (real processes on Redis)', () => {
  it('a worker SIGKILLed mid-graph: the other worker goes on from the last superstep, the node before the kill ran once', async () => {
    const { run_id, session_id } = await startRun('durable', { topic: 'durability' });
    const held = await waitFor('slow to start', () => nodeRuns(['slow'])[0], 30_000, 50);
    const victim = workers.find((w) => w.pid === held.pid);
    const survivor = workers.find((w) => w.pid !== held.pid)!;
    expect(victim, `slow ran in pid ${held.pid}, not a worker of this test`).toBeDefined();
    expect((await call(`${api!.url}/api/runs/${run_id}`)).body.status).toBe('running');

    // At once, as a crash comes: nothing waits for what the victim still writes in the background.
    victim!.signal('SIGKILL');
    expect(await victim!.exited).toBeNull();
    writeFileSync(releaseFile, '');
    await runUntil(run_id, 'completed', 45_000);

    // first ran once, in the killed worker; slow there, then again on the survivor; last once, on the survivor.
    expect(nodeRuns(['first', 'slow', 'last'])).toEqual([
      { node: 'first', pid: victim!.pid },
      { node: 'slow', pid: victim!.pid },
      { node: 'slow', pid: survivor.pid },
      { node: 'last', pid: survivor.pid },
    ]);
    await survivor.waitForLine(jobStarted(run_id), 1_000);

    const state = await call(`${api!.url}/api/sessions/state?session_id=${session_id}`);
    expect(state.body.state).toEqual({
      topic: 'durability',
      first_out: 'first(durability)',
      slow_out: 'slow(first(durability))',
      last_out: 'last(slow(first(durability)))',
    });
    expect(state.body.node_id).toBe('__end__');

    expect((await eventsUntilCompleted(run_id)).map(brief)).toEqual([
      'node_start:first',
      'node_end:first:ok',
      'node_start:slow',
      // The survivor announces the task it takes up again, as a native run's retry does.
      'node_start:slow',
      'node_end:slow:ok',
      'node_start:last',
      'node_end:last:ok',
      'completed',
    ]);
    // The killed attempt of slow left no span; the survivor's did.
    expect(await spansOf(session_id)).toEqual(['run durable:completed', 'first:ok', 'slow:ok', 'last:ok']);
    expect(await historyOf(session_id)).toEqual(['__start__', 'first', 'slow', 'last', '__end__']);
  }, 90_000);

  it('a run paused at an interrupt outlives every worker: answered while none runs, a new worker resumes it', async () => {
    const { run_id, session_id } = await startRun('durable-review', { text: 'notes' });
    await runUntil(run_id, 'interrupted', 30_000);
    const { body } = await call(`${api!.url}/api/approval/pending?limit=500`);
    const pending = (body.pending as { id: string; run_id: string; prompt: string; node_id: string }[]).filter((a) => a.run_id === run_id);
    expect(pending.map((a) => [a.prompt, a.node_id])).toEqual([['Publish draft(notes)?', 'review']]);
    const pausedBy = nodeRuns(['review'])[0]!.pid;

    for (const worker of workers) worker.signal('SIGKILL');
    await Promise.all(workers.map((w) => w.exited));
    const answered = await call(`${api!.url}/api/approval/respond`, { method: 'POST', json: { id: pending[0]!.id, approved: true, comment: 'ship it' } });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);

    const fresh = await startWorker();
    workers.push(fresh);
    await runUntil(run_id, 'completed', 30_000);

    // The interrupted node runs again on resume (LangGraph replays it with the answer); draft does not.
    expect(nodeRuns(['draft', 'review', 'publish'])).toEqual([
      { node: 'draft', pid: pausedBy },
      { node: 'review', pid: pausedBy },
      { node: 'review', pid: fresh.pid },
      { node: 'publish', pid: fresh.pid },
    ]);
    const state = await call(`${api!.url}/api/sessions/state?session_id=${session_id}`);
    expect(state.body.state).toEqual({
      text: 'notes',
      drafted: 'draft(notes)',
      verdict: 'approved: ship it',
      published: 'draft(notes) (approved: ship it)',
    });
    expect((await eventsUntilCompleted(run_id)).map(brief)).toEqual([
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
    expect(await spansOf(session_id)).toEqual(['run durable-review:completed', 'draft:ok', 'review:interrupted', 'review:ok', 'publish:ok']);
    expect(await historyOf(session_id)).toEqual(['__start__', 'draft', 'review', 'publish', '__end__']);
  }, 150_000);
});
