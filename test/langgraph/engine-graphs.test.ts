import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Annotation, Command, END, Send, START, StateGraph, type LangGraphRunnableConfig } from '@langchain/langgraph';
import type { RunEvent, Span } from '../../src/domain/types.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { brief } from '../support/events.js';
import { graphAgent, parallelBranches } from '../support/langgraph.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { eventsOf, openRaw } from '../support/sse.js';

/**
 * The LangGraph engine on both backends, through the HTTP API, with real graphs built here:
 * each scenario checks the run's final values (the wait's answer and GET /api/sessions/state),
 * its events (replayed from GET /api/events/stream for the session) and its spans.
 */

const concat = <T>() => Annotation<T[]>({ reducer: (left, right) => left.concat(right), default: () => [] });

const Parallel = Annotation.Root({ topic: Annotation<string>, parts: concat<string>(), joined: Annotation<string> });
/**
 * Fan-out from START to two branches that must run at once (parallelBranches: their spans
 * overlap strictly), their parts joined by the reducer and a join node.
 */
function parallelGraph(announced: (runId: string) => Promise<number>) {
  const branch = parallelBranches(announced);
  return new StateGraph(Parallel)
    .addNode('left', branch('left'))
    .addNode('right', branch('right'))
    .addNode('join', (state) => ({ joined: [...state.parts].sort().join(' + ') }))
    .addEdge(START, 'left')
    .addEdge(START, 'right')
    .addEdge(['left', 'right'], 'join')
    .addEdge('join', END)
    .compile();
}

const MapReduce = Annotation.Root({ items: Annotation<string[]>, results: concat<string>(), summary: Annotation<string> });
const WorkerInput = Annotation.Root({ item: Annotation<string> });
const mapReduceGraph = new StateGraph(MapReduce)
  .addNode('worker', (input: typeof WorkerInput.State) => ({ results: [input.item.toUpperCase()] }), { input: WorkerInput })
  .addNode('reduce', (state) => ({ summary: state.results.join(',') }))
  .addConditionalEdges(START, (state) => state.items.map((item) => new Send('worker', { item })), ['worker'])
  .addEdge('worker', 'reduce')
  .addEdge('reduce', END)
  .compile();

const Inner = Annotation.Root({ text: Annotation<string>, inner_steps: concat<string>() });
const innerGraph = new StateGraph(Inner)
  .addNode('shout', (state) => ({ text: state.text.toUpperCase(), inner_steps: ['shout'] }))
  .addNode('mark', (state) => ({ text: `${state.text}!`, inner_steps: ['mark'] }))
  .addEdge(START, 'shout')
  .addEdge('shout', 'mark')
  .addEdge('mark', END)
  .compile();
const Outer = Annotation.Root({ text: Annotation<string>, inner_steps: Annotation<string[]>, finished: Annotation<string> });
const subgraphGraph = new StateGraph(Outer)
  .addNode('prepare', (state) => ({ text: state.text.trim() }))
  .addNode('inner', innerGraph)
  .addNode('finish', (state) => ({ finished: `${state.text} after ${state.inner_steps.join(',')}` }))
  .addEdge(START, 'prepare')
  .addEdge('prepare', 'inner')
  .addEdge('inner', 'finish')
  .addEdge('finish', END)
  .compile();

const Parity = Annotation.Root({ n: Annotation<number>, kind: Annotation<string> });
const conditionalGraph = new StateGraph(Parity)
  .addNode('classify', () => ({}))
  .addNode('even', (state) => ({ kind: `${state.n} is even` }))
  .addNode('odd', (state) => ({ kind: `${state.n} is odd` }))
  .addEdge(START, 'classify')
  .addConditionalEdges('classify', (state) => (state.n % 2 === 0 ? 'even' : 'odd'), ['even', 'odd'])
  .addEdge('even', END)
  .addEdge('odd', END)
  .compile();

const Review = Annotation.Root({ amount: Annotation<number>, verdict: Annotation<string>, outcome: Annotation<string> });
const commandGraph = new StateGraph(Review)
  .addNode('decide', (state) => new Command({ goto: state.amount > 100 ? 'refuse' : 'accept', update: { verdict: `decided on ${state.amount}` } }), {
    ends: ['accept', 'refuse'],
  })
  .addNode('accept', (state) => ({ outcome: `accepted (${state.verdict})` }))
  .addNode('refuse', (state) => ({ outcome: `refused (${state.verdict})` }))
  .addEdge(START, 'decide')
  .addEdge('accept', END)
  .addEdge('refuse', END)
  .compile();

const Talk = Annotation.Root({ said: concat<string>() });
const writerGraph = new StateGraph(Talk)
  .addNode('talk', (_state, config: LangGraphRunnableConfig) => {
    config.writer?.({ step: 1, text: 'thinking' });
    config.writer?.({ step: 2, text: 'almost' });
    config.writer?.('done');
    return { said: ['talked'] };
  })
  .addNode('after', () => ({ said: ['after'] }))
  .addEdge(START, 'talk')
  .addEdge('talk', 'after')
  .addEdge('after', END)
  .compile();

const Fuse = Annotation.Root({ lit: Annotation<boolean> });
const throwingGraph = new StateGraph(Fuse)
  .addNode('light', () => ({ lit: true }))
  .addNode('explode', (): Partial<typeof Fuse.State> => {
    throw new Error('the fuse burnt down');
  })
  .addEdge(START, 'light')
  .addEdge('light', 'explode')
  .addEdge('explode', END)
  .compile();

const LOOP_LIMIT = 6;
const Loop = Annotation.Root({ turns: Annotation<number> });
const loopGraph = new StateGraph(Loop)
  .addNode('spin', (state) => ({ turns: (state.turns ?? 0) + 1 }))
  .addEdge(START, 'spin')
  .addConditionalEdges('spin', () => 'spin', ['spin', END])
  .compile()
  .withConfig({ recursionLimit: LOOP_LIMIT });

const agents = (announced: (runId: string) => Promise<number>) =>
  new AgentRegistry([
    graphAgent('lg-parallel', () => parallelGraph(announced), ['left', 'right', 'join']),
    graphAgent('lg-map', mapReduceGraph, ['worker', 'reduce']),
    graphAgent('lg-subgraph', subgraphGraph, ['prepare', 'inner', 'finish']),
    graphAgent('lg-conditional', conditionalGraph, ['classify', 'even', 'odd']),
    graphAgent('lg-command', commandGraph, ['decide', 'accept', 'refuse']),
    graphAgent('lg-writer', writerGraph, ['talk', 'after']),
    graphAgent('lg-throws', throwingGraph),
    graphAgent('lg-loop', loopGraph, ['spin']),
  ]);

/** What a run shows through the API once it stopped. */
interface Finished {
  /** The POST /api/runs/wait answer. */
  run: Record<string, any>;
  /** GET /api/sessions/state. */
  state: Record<string, any>;
  /** The session's events, replayed from GET /api/events/stream, up to the run's end. */
  events: RunEvent[];
  /** GET /api/traces: the nodes' spans (the root span apart). */
  spans: Span[];
  root: Span;
}

const ENDS = ['completed', 'failed', 'cancelled'];
/** The tenant of the anonymous caller. */
const TENANT = 'DefaultTenant';

async function runGraph(api: TestApi, agentId: string, input: Record<string, unknown>): Promise<Finished> {
  const waited = await call(`${api.url}/api/runs/wait`, { method: 'POST', json: { agent_id: agentId, input, wait_ms: 15_000 } });
  expect(waited.status, JSON.stringify(waited.body)).toBe(200);
  const run = waited.body as Record<string, any>;
  const session = run.session_id as string;

  const state = await call(`${api.url}/api/sessions/state?session_id=${session}`);
  expect(state.status).toBe(200);

  const replay = await openRaw(`${api.url}/api/events/stream?session=${session}&last_event_id=0-0`);
  let events: RunEvent[];
  try {
    expect(replay.status).toBe(200);
    await replay.waitForFrames((frames) => eventsOf(frames).some((e) => ENDS.includes(e.event.type)), `the end event of run ${run.id}`);
    events = eventsOf(replay.frames).map((e) => e.event);
  } finally {
    replay.destroy();
  }
  expect(events.every((e) => e.run_id === run.id && e.agent_id === agentId)).toBe(true);

  const traces = await call(`${api.url}/api/traces?session_id=${session}`);
  expect(traces.status).toBe(200);
  const all = traces.body.traces as Span[];
  const root = all.find((s) => s.parent_id === '');
  expect(root, JSON.stringify(all)).toMatchObject({ span_id: run.id, name: `run ${agentId}` });
  const spans = all.filter((s) => s.parent_id !== '');
  expect(spans.every((s) => s.parent_id === run.id && s.attributes.run_id === run.id && s.attributes.node_id === s.name)).toBe(true);
  return { run, state: state.body, events, spans, root: root! };
}

/** The events in the short form (`node_end:join:ok`), custom events apart. */
const flow = (events: RunEvent[]) => events.filter((e) => e.type !== 'custom').map(brief);
const spanNames = (spans: Span[]) => spans.map((s) => `${s.name}:${String(s.attributes.status)}`).sort();
const ms = (iso: string) => Date.parse(iso);

function expectCompleted(finished: Finished, values: Record<string, unknown>): void {
  expect(finished.run).toMatchObject({ status: 'completed', state: values });
  expect(finished.run.state).toEqual(values);
  expect(finished.state).toMatchObject({ node_id: '__end__', state: values });
  expect(finished.state.state).toEqual(values);
  expect(finished.events.at(-1)?.type).toBe('completed');
  expect(finished.root.attributes.status).toBe('completed');
}

describe.each([
  ['memory', false],
  ['redis', true],
])('LangGraph graphs run by the engine (%s backend)', (_name, onRedis) => {
  let redis: TestRedis | undefined;
  let api: TestApi;
  beforeAll(async () => {
    if (onRedis) redis = await startRedis();
    const announced = async (runId: string) =>
      (await api.backend.events.readAfter(TENANT, '0-0', 10_000)).filter((e) => e.event.run_id === runId && e.event.type === 'node_start').length;
    api = await startTestApi({ agents: agents(announced), ...(redis ? { redisUrl: redis.url } : {}) });
    api.composition.startExecuting();
  });
  afterAll(async () => {
    await api?.close();
    await redis?.stop();
  });

  it('lists the graph agents with the nodes they were given', async () => {
    const listed = await call(`${api.url}/api/agents`);
    expect(listed.status).toBe(200);
    expect(listed.body.agents).toContainEqual({
      id: 'lg-parallel',
      description: expect.any(String),
      nodes: ['left', 'right', 'join'],
      entry: '__start__',
    });
    expect(listed.body.agents.find((a: { id: string }) => a.id === 'lg-throws')).toMatchObject({ nodes: [] });
  });

  it('runs two branches in parallel (overlapping spans) and joins their parts through the reducer', async () => {
    const finished = await runGraph(api, 'lg-parallel', { topic: 'tea' });
    expectCompleted(finished, { topic: 'tea', parts: ['left:tea', 'right:tea'], joined: 'left:tea + right:tea' });
    const flowed = flow(finished.events);
    expect(flowed.slice(0, 4).sort()).toEqual(['node_end:left:ok', 'node_end:right:ok', 'node_start:left', 'node_start:right']);
    expect(flowed.slice(0, 2).sort()).toEqual(['node_start:left', 'node_start:right']);
    expect(flowed.slice(4)).toEqual(['node_start:join', 'node_end:join:ok', 'completed']);
    expect(spanNames(finished.spans)).toEqual(['join:ok', 'left:ok', 'right:ok']);
    const [left, right] = ['left', 'right'].map((name) => finished.spans.find((s) => s.name === name)!);
    expect(ms(left!.start)).toBeLessThan(ms(right!.end));
    expect(ms(right!.start)).toBeLessThan(ms(left!.end));
  });

  it('sends one worker task per item and reduces their results', async () => {
    const finished = await runGraph(api, 'lg-map', { items: ['a', 'b', 'c'] });
    expectCompleted(finished, { items: ['a', 'b', 'c'], results: ['A', 'B', 'C'], summary: 'A,B,C' });
    expect(flow(finished.events)).toEqual([
      ...Array(3).fill('node_start:worker'),
      ...Array(3).fill('node_end:worker:ok'),
      'node_start:reduce',
      'node_end:reduce:ok',
      'completed',
    ]);
    expect(spanNames(finished.spans)).toEqual(['reduce:ok', 'worker:ok', 'worker:ok', 'worker:ok']);
  });

  it('runs a subgraph as a node: its values reach the parent', async () => {
    const finished = await runGraph(api, 'lg-subgraph', { text: '  hello ' });
    expectCompleted(finished, { text: 'HELLO!', inner_steps: ['shout', 'mark'], finished: 'HELLO! after shout,mark' });
    expect(flow(finished.events)).toEqual([
      'node_start:prepare',
      'node_end:prepare:ok',
      'node_start:inner',
      'node_end:inner:ok',
      'node_start:finish',
      'node_end:finish:ok',
      'completed',
    ]);
    expect(spanNames(finished.spans)).toEqual(['finish:ok', 'inner:ok', 'prepare:ok']);
  });

  it('takes either path of a conditional edge, as the input decides', async () => {
    for (const [n, path, kind] of [
      [4, 'even', '4 is even'],
      [7, 'odd', '7 is odd'],
    ] as const) {
      const finished = await runGraph(api, 'lg-conditional', { n });
      expectCompleted(finished, { n, kind });
      expect(flow(finished.events)).toEqual(['node_start:classify', 'node_end:classify:ok', `node_start:${path}`, `node_end:${path}:ok`, 'completed']);
      expect(spanNames(finished.spans)).toEqual(['classify:ok', `${path}:ok`]);
    }
  });

  it('follows a Command from a node: its goto target runs, with its update applied', async () => {
    const finished = await runGraph(api, 'lg-command', { amount: 250 });
    expectCompleted(finished, { amount: 250, verdict: 'decided on 250', outcome: 'refused (decided on 250)' });
    expect(flow(finished.events)).toEqual(['node_start:decide', 'node_end:decide:ok', 'node_start:refuse', 'node_end:refuse:ok', 'completed']);
    expect(spanNames(finished.spans)).toEqual(['decide:ok', 'refuse:ok']);
  });

  it('publishes config.writer data as custom events of the node, in order, before its node_end', async () => {
    const finished = await runGraph(api, 'lg-writer', {});
    expectCompleted(finished, { said: ['talked', 'after'] });
    expect(finished.events.map(brief)).toEqual([
      'node_start:talk',
      'custom:talk',
      'custom:talk',
      'custom:talk',
      'node_end:talk:ok',
      'node_start:after',
      'node_end:after:ok',
      'completed',
    ]);
    expect(finished.events.filter((e) => e.type === 'custom').map((e) => [e.name, e.data])).toEqual([
      ['custom', { step: 1, text: 'thinking' }],
      ['custom', { step: 2, text: 'almost' }],
      ['custom', 'done'],
    ]);
    expect(spanNames(finished.spans)).toEqual(['after:ok', 'talk:ok']);
  });

  it('fails the run with the message of a node that throws: a failed event, the node span in error', async () => {
    const finished = await runGraph(api, 'lg-throws', {});
    expect(finished.run).toMatchObject({ status: 'failed', error: 'the fuse burnt down', state: { lit: true } });
    // The last checkpoint is the one before the failed node, which a resume runs again.
    expect(finished.state).toMatchObject({ node_id: 'explode', state: { lit: true } });
    expect(flow(finished.events)).toEqual(['node_start:light', 'node_end:light:ok', 'node_start:explode', 'node_end:explode:error', 'failed']);
    expect(finished.events.at(-1)).toMatchObject({ type: 'failed', error: 'the fuse burnt down' });
    expect(spanNames(finished.spans)).toEqual(['explode:error', 'light:ok']);
    expect(finished.spans.find((s) => s.name === 'explode')?.attributes.error).toBe('the fuse burnt down');
    expect(finished.root.attributes).toMatchObject({ status: 'failed', error: 'the fuse burnt down' });
  });

  it('fails a loop past the graph recursion limit with an error naming the limit (and its class, GraphRecursionError)', async () => {
    const finished = await runGraph(api, 'lg-loop', { turns: 0 });
    const named = new RegExp(`^GraphRecursionError: The graph exceeded its step limit \\(recursionLimit ${LOOP_LIMIT}\\)`);
    expect(finished.run).toMatchObject({ status: 'failed', error: expect.stringMatching(named) });
    expect(finished.events.at(-1)).toEqual(expect.objectContaining({ type: 'failed', error: finished.run.error }));
    // LOOP_LIMIT steps ran; the last one's writes never made a checkpoint.
    expect(flow(finished.events)).toEqual([...Array<string[]>(LOOP_LIMIT).fill(['node_start:spin', 'node_end:spin:ok']).flat(), 'failed']);
    expect(finished.state).toMatchObject({ node_id: 'spin', state: { turns: LOOP_LIMIT - 1 } });
    expect(spanNames(finished.spans)).toEqual(Array(LOOP_LIMIT).fill('spin:ok'));
  });
});
