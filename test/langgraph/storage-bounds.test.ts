import { randomUUID } from 'node:crypto';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RedisKeys } from '../../src/adapters/redis/keys.js';
import { graphAgent } from '../support/langgraph.js';
import { waitFor } from '../support/wait.js';
import { BACKENDS, useGraphApi } from './graph-api.js';

/**
 * What a graph thread may hold, on both backends: SERVICE_MAX_STATE_BYTES bounds a checkpoint's
 * whole state and each task's writes (a refused write stores nothing and fails the run), the
 * subgraph namespaces of a thread share one SERVICE_CHECKPOINTS_RETAIN bound, and nothing is
 * written for a thread whose session is gone.
 */

/** The tenant of the anonymous caller. */
const TENANT = 'DefaultTenant';
const CAP = 64 * 1024;
const RETAIN = 5;
const CHUNK = 'x'.repeat(10 * 1024);

/** Ten channels, each node filling one with 10 KiB: every checkpoint adds 10 KiB, the state grows to 100 KiB. */
const Wide = Annotation.Root(Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`c${i}`, Annotation<string>()])));
function wideGraph() {
  const graph: any = new StateGraph(Wide);
  for (let i = 0; i < 10; i += 1) graph.addNode(`n${i}`, () => ({ [`c${i}`]: CHUNK }));
  graph.addEdge(START, 'n0');
  for (let i = 1; i < 10; i += 1) graph.addEdge(`n${i - 1}`, `n${i}`);
  return graph.addEdge('n9', END).compile();
}

/** One node writing 100 KiB at once: its write alone passes the cap. */
const Big = Annotation.Root({ blob: Annotation<string> });
const bigWriteGraph = new StateGraph(Big)
  .addNode('write', () => ({ blob: 'y'.repeat(100 * 1024) }))
  .addEdge(START, 'write')
  .addEdge('write', END)
  .compile();

/** A graph whose node is a subgraph: each run's subgraph task writes its checkpoints in a namespace of its own. */
const Inner = Annotation.Root({ count: Annotation<number> });
const innerGraph = new StateGraph(Inner)
  .addNode('a', (state) => ({ count: state.count + 1 }))
  .addNode('b', (state) => ({ count: state.count + 1 }))
  .addEdge(START, 'a')
  .addEdge('a', 'b')
  .addEdge('b', END)
  .compile();
const nestedGraph = new StateGraph(Inner).addNode('inner', innerGraph).addEdge(START, 'inner').addEdge('inner', END).compile();

describe.each(BACKENDS)('what a graph thread may hold (%s)', (backend) => {
  const api = useGraphApi(
    backend,
    () => [graphAgent('wide', wideGraph()), graphAgent('big-write', bigWriteGraph), graphAgent('nested', nestedGraph)],
    { SERVICE_MAX_STATE_BYTES: String(CAP), SERVICE_CHECKPOINTS_RETAIN: String(RETAIN) },
  );

  /** A run of `agentId` waited for to its end (POST /api/runs/wait answers the run). */
  async function waited(agentId: string, input: Record<string, unknown>, sessionId?: string): Promise<Record<string, any>> {
    const { status, body } = await api.post('/api/runs/wait', { agent_id: agentId, input, wait_ms: 15_000, ...(sessionId ? { session_id: sessionId } : {}) });
    expect(status, JSON.stringify(body)).toBe(200);
    return body;
  }

  /** Every stored LangGraph checkpoint of a thread (all namespaces), with its state's and writes' sizes. */
  async function storedOf(threadId: string) {
    const storage = api.app.backend.graphCheckpoints;
    const entries = [];
    let cursor: string | undefined;
    do {
      const page = await storage.listCheckpoints(TENANT, threadId, { limit: 100, cursor });
      entries.push(...page.entries);
      cursor = page.next;
    } while (cursor !== undefined);
    return entries.map((entry) => ({
      ns: entry.ns,
      stateBytes: Object.values(entry.values).reduce((sum, value) => sum + Buffer.byteLength(value), 0),
      largestWrite: Math.max(0, ...entry.writes.map((write) => Buffer.byteLength(write.value))),
    }));
  }

  it('bounds the whole state of a checkpoint, not its new values: the run fails when the state would pass the cap, nothing past it is stored', async () => {
    const run = await waited('wide', {});
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(/SERVICE_MAX_STATE_BYTES/);
    const stored = await storedOf(run.session_id);
    expect(stored.length).toBeGreaterThan(0);
    for (const checkpoint of stored) expect(checkpoint.stateBytes).toBeLessThanOrEqual(CAP);
    // The graph got as far as the cap lets it: six 10 KiB channels fit in 64 KiB, a seventh does not.
    expect(Math.max(...stored.map((c) => c.stateBytes))).toBeGreaterThan(CAP - 2 * CHUNK.length);
  });

  it("refuses a task's write past the cap: the run fails and the write is nowhere stored", async () => {
    const run = await waited('big-write', {});
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(/SERVICE_MAX_STATE_BYTES/);
    for (const checkpoint of await storedOf(run.session_id)) {
      expect(checkpoint.largestWrite).toBeLessThanOrEqual(CAP);
      expect(checkpoint.stateBytes).toBeLessThanOrEqual(CAP);
    }
  });

  it('keeps a thread’s subgraph checkpoints to SERVICE_CHECKPOINTS_RETAIN across all their namespaces, the root’s to its own', async () => {
    const first = await waited('nested', { count: 0 });
    expect(first.status).toBe('completed');
    const sessionId = first.session_id as string;
    for (let i = 0; i < 7; i += 1) expect((await waited('nested', { count: 0 }, sessionId)).status).toBe('completed');
    const stored = await storedOf(sessionId);
    const subgraphs = stored.filter((c) => c.ns !== '');
    // Eight runs, each a subgraph namespace of about four checkpoints: without the shared bound, 30 or more.
    expect(new Set(subgraphs.map((c) => c.ns)).size).toBeGreaterThanOrEqual(1);
    expect(subgraphs.length).toBeLessThanOrEqual(RETAIN);
    expect(stored.filter((c) => c.ns === '').length).toBeLessThanOrEqual(RETAIN);
    // The thread still reads, its last run's subgraph included.
    const { status, body } = await api.get(`/threads/${sessionId}/state?subgraphs=true`);
    expect(status).toBe(200);
    expect(body.values).toEqual({ count: 2 });
  });

  it('writes no LangGraph checkpoint or write for a thread whose session is gone, and stores nothing of the refused put', async () => {
    const storage = api.app.backend.graphCheckpoints;
    const tenant = `t-${randomUUID()}`;
    const threadId = randomUUID();
    const record = { checkpointId: '1', checkpoint: '{}', metadata: '{}', versions: { a: '1' } };
    await expect(storage.putCheckpoint(tenant, threadId, { ns: '', record, blobs: { a: '"v"' }, retain: RETAIN, maxStateBytes: CAP, requireSession: true })).rejects.toMatchObject({
      code: 'conflict',
    });
    await expect(
      storage.putWrites(tenant, threadId, '', '1', [{ taskId: 't', idx: 0, channel: 'a', value: '"w"', taskPath: '' }], { requireSession: true }),
    ).rejects.toMatchObject({ code: 'conflict' });
    expect(await storage.getCheckpoint(tenant, threadId, '')).toBeNull();
    expect(await storage.listThreads(tenant, undefined, 10)).toEqual([]);
    // Without the requirement (the saver on its own) the same put is stored.
    await storage.putCheckpoint(tenant, threadId, { ns: '', record, blobs: { a: '"v"' }, retain: RETAIN, maxStateBytes: CAP });
    expect(await storage.getCheckpoint(tenant, threadId, '')).toMatchObject({ values: { a: '"v"' } });
    await storage.deleteThread(tenant, threadId);
  });
});

/** A graph whose first node waits for the test: the run's data can be lost while it is under way. */
let release: (() => void) | undefined;
const reached: string[] = [];
const Steps = Annotation.Root({ steps: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });
const heldGraph = new StateGraph(Steps)
  .addNode('hold', async () => {
    reached.push('hold');
    await new Promise<void>((resolve) => (release = resolve));
    return { steps: ['hold'] };
  })
  .addNode('after', () => {
    reached.push('after');
    return { steps: ['after'] };
  })
  .addEdge(START, 'hold')
  .addEdge('hold', 'after')
  .addEdge('after', END)
  .compile();

describe('a graph run whose data Redis lost', () => {
  const api = useGraphApi('redis', () => [graphAgent('held', heldGraph)]);

  it('stops at its next write, and leaves no LangGraph key for the thread that no longer exists', async () => {
    const { body } = await api.post('/api/runs', { agent_id: 'held', input: {} });
    const { run_id: runId, session_id: sessionId } = body;
    await waitFor('the graph to hold', () => reached.includes('hold') && release !== undefined);
    const { config } = api.app.composition;
    const redis = new Redis(config.REDIS_URL!);
    try {
      const keys = new RedisKeys(config.SERVICE_KEY_PREFIX);
      const threadKeys = Object.values(keys.graphThread(TENANT, sessionId));
      // Redis loses the session and its run (as after a restart without persistence), and the thread's LangGraph data.
      await redis.del(keys.session(TENANT, sessionId), keys.run(TENANT, runId), ...threadKeys);
      release!();
      await waitFor('the worker to drop the run', () => api.app.logs.some((line) => line.run_id === runId && line.msg === 'run job dropped: its run is gone or ended'));
      expect(reached).toEqual(['hold']);
      expect(await redis.exists(...threadKeys)).toBe(0);
    } finally {
      redis.disconnect();
    }
  });
});
