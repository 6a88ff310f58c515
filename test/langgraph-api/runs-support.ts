import { FakeListChatModel } from '@langchain/core/utils/testing';
import { Annotation, END, interrupt, MessagesAnnotation, START, StateGraph, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll } from 'vitest';
import type { Agent } from '../../src/runtime/agent.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { builtInAgents } from '../../src/agents/index.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { graphAgent } from '../support/langgraph.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/** The graphs the LangGraph runs tests drive through the SDK, and the API they run on. */

export const BACKENDS = ['memory', 'redis'] as const;
export type BackendName = (typeof BACKENDS)[number];

const Steps = Annotation.Root({
  steps: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  word: Annotation<string>,
});

/** first → second; second writes `{progress}` to the custom stream. */
const twoSteps = new StateGraph(Steps)
  .addNode('first', () => ({ steps: ['first'] }))
  .addNode('second', (_state, config: LangGraphRunnableConfig) => {
    config.writer?.({ progress: 'second' });
    return { steps: ['second'] };
  })
  .addEdge(START, 'first')
  .addEdge('first', 'second')
  .addEdge('second', END)
  .compile();

/** Gates the test opens: a node of a run with word `hold` waits at one (or until its run is cancelled). */
export const gates = {
  waiting: 0,
  open: [] as (() => void)[],
  /** Lets every waiting node go on. */
  release(): void {
    for (const open of this.open.splice(0)) open();
  },
};

function gate(signal: AbortSignal | undefined): Promise<void> {
  gates.waiting += 1;
  return new Promise<void>((resolve, reject) => {
    gates.open.push(resolve);
    signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
  });
}

/** a → b → c; b waits at a gate when the word is `hold`. */
const gated = new StateGraph(Steps)
  .addNode('a', (state) => ({ steps: [`a:${state.word}`] }))
  .addNode('b', async (state, config: LangGraphRunnableConfig) => {
    if (state.word === 'hold') await gate(config.signal);
    return { steps: [`b:${state.word}`] };
  })
  .addNode('c', (state) => ({ steps: [`c:${state.word}`] }))
  .addEdge(START, 'a')
  .addEdge('a', 'b')
  .addEdge('b', 'c')
  .addEdge('c', END)
  .compile();

/** Two interrupts, one after the other, then done. */
const review = new StateGraph(Steps)
  .addNode('ask', () => ({ steps: [`first:${JSON.stringify(interrupt({ question: 'first?' }))}`] }))
  .addNode('ask2', () => ({ steps: [`second:${JSON.stringify(interrupt('second?'))}`] }))
  .addNode('done', () => ({ steps: ['done'] }))
  .addEdge(START, 'ask')
  .addEdge('ask', 'ask2')
  .addEdge('ask2', 'done')
  .addEdge('done', END)
  .compile();

const failing = new StateGraph(Steps)
  .addNode('boom', () => {
    throw new Error('boom');
  })
  .addEdge(START, 'boom')
  .addEdge('boom', END)
  .compile();

/** A parent whose one node is a subgraph (inner). */
const child = new StateGraph(Steps)
  .addNode('inner', () => ({ steps: ['inner'] }))
  .addEdge(START, 'inner')
  .addEdge('inner', END)
  .compile();
const parent = new StateGraph(Steps).addNode('sub', child).addEdge(START, 'sub').addEdge('sub', END).compile();

/** A chat model that streams its answer character by character. */
const chat = new StateGraph(MessagesAnnotation)
  .addNode('model', async (state) => ({ messages: [await new FakeListChatModel({ responses: ['hi!'] }).invoke(state.messages)] }))
  .addEdge(START, 'model')
  .addEdge('model', END)
  .compile();

/** Loops until a recursion limit stops it, counting its turns (`loop-8` with its own limit of 8). */
const Turns = Annotation.Root({ turns: Annotation<number> });
const loop = new StateGraph(Turns)
  .addNode('spin', (state) => ({ turns: (state.turns ?? 0) + 1 }))
  .addEdge(START, 'spin')
  .addConditionalEdges('spin', () => 'spin', ['spin', END])
  .compile();

/** A function export: its one node is named by the run's `configurable.node` (an assistant's config, say). */
const Named = Annotation.Root({ steps: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });
export const namedNode = (config: { configurable?: Record<string, unknown> }) => {
  const node = typeof config.configurable?.node === 'string' ? config.configurable.node : 'plain';
  return new StateGraph(Named)
    .addNode(node, () => ({ steps: [node] }))
    .addEdge(START, node)
    .addEdge(node, END)
    .compile();
};

/** A router whose `weather` route is a subgraph that pauses before its second node (interruptBefore at compile). */
const Forecast = Annotation.Root({ ...MessagesAnnotation.spec, city: Annotation<string> });
const forecast = new StateGraph(Forecast)
  .addNode('locate', () => ({ city: 'Lisbon' }))
  .addNode('report', (state) => ({ messages: [{ role: 'ai', content: `Sunny in ${state.city}` }] }))
  .addEdge(START, 'locate')
  .addEdge('locate', 'report')
  .addEdge('report', END)
  .compile({ interruptBefore: ['report'] });
const Routed = Annotation.Root({ ...MessagesAnnotation.spec, route: Annotation<string> });
const routed = new StateGraph(Routed)
  .addNode('router', () => ({ route: 'forecast' }))
  .addNode('forecast', forecast)
  .addNode('chat', () => ({ messages: [{ role: 'ai', content: 'Hello' }] }))
  .addEdge(START, 'router')
  .addConditionalEdges('router', (state) => (state.route === 'forecast' ? 'forecast' : 'chat'), ['forecast', 'chat'])
  .addEdge('forecast', END)
  .addEdge('chat', END)
  .compile();

/**
 * A graph as LangGraph 1.1 streams it (the version LangGraph's server suite installs): a run
 * going on from a checkpoint (no input) has its root graph's chunks under the namespace [""],
 * and a model's `messages` come under the namespace of the task that called it (its metadata's
 * `langgraph_checkpoint_ns`, the task's own segment included).
 */
function asLangGraph11<G extends { withConfig(config: never): unknown; stream(input: never, options?: never): Promise<unknown> }>(graph: G): G {
  const namespaceOf = (input: unknown, namespace: string[], mode: string, data: unknown): string[] => {
    if (mode === 'messages') {
      const ns = (data as [unknown, { langgraph_checkpoint_ns?: string }])[1]?.langgraph_checkpoint_ns;
      if (typeof ns === 'string' && ns !== '') return ns.split('|');
    }
    return input === null && namespace.length === 0 ? [''] : namespace;
  };
  return new Proxy(graph, {
    get(target, prop) {
      if (prop === 'withConfig') return (config: never) => asLangGraph11(target.withConfig(config) as G);
      if (prop === 'stream') {
        return async (input: never, options: never) => {
          const chunks = (await target.stream(input, options)) as AsyncIterable<[string[], string, unknown]>;
          return (async function* () {
            for await (const [namespace, mode, data] of chunks) yield [namespaceOf(input, namespace, mode, data), mode, data];
          })();
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

export const testAgents = (): Agent[] => [
  ...builtInAgents,
  graphAgent('lg-two', twoSteps, ['first', 'second']),
  graphAgent('lg-gated', gated, ['a', 'b', 'c']),
  graphAgent('lg-review', review, ['ask', 'ask2', 'done']),
  graphAgent('lg-failing', failing, ['boom']),
  graphAgent('lg-parent', parent, ['sub']),
  graphAgent('lg-chat', chat, ['model']),
  graphAgent('lg-loop', loop, ['spin']),
  graphAgent('lg-loop-8', loop.withConfig({ recursionLimit: 8 }), ['spin']),
  graphAgent('lg-named', namedNode, ['plain']),
  graphAgent('lg-routed', routed, ['router', 'forecast', 'chat']),
  graphAgent('lg-routed-11', asLangGraph11(routed), ['router', 'forecast', 'chat']),
  graphAgent('lg-chat-11', asLangGraph11(chat), ['model']),
];

export interface LangGraphApi {
  app: TestApi;
  client: Client;
  /** GET an /api/* path of the same API. */
  get(path: string): Promise<{ status: number; body: any }>;
  /** POST a path of the same API. */
  post(path: string, json: unknown): Promise<{ status: number; headers: Headers; body: any }>;
  /** Waits until the run (GET /api/runs/{id}) has `status`. */
  runUntil(runId: string, status: string): Promise<any>;
}

/** An API on `backend` with {@link testAgents}, executing runs in this process, and an SDK client of it (one per describe block). */
export function useLangGraphApi(backend: BackendName, env: Record<string, string> = {}): LangGraphApi {
  let redis: TestRedis | undefined;
  const api = {} as LangGraphApi;
  beforeAll(async () => {
    if (backend === 'redis') redis = await startRedis();
    api.app = await startTestApi({ agents: new AgentRegistry(testAgents()), env, ...(redis ? { redisUrl: redis.url } : {}) });
    if (api.app.backend.mode !== backend) throw new Error(`Asked for the ${backend} backend, got ${api.app.backend.mode}.`);
    api.app.composition.startExecuting();
    api.client = new Client({ apiUrl: api.app.url, apiKey: null });
  });
  afterAll(async () => {
    gates.release();
    await api.app?.close();
    await redis?.stop();
  });
  api.get = (path) => call(`${api.app.url}${path}`);
  api.post = (path, json) => call(`${api.app.url}${path}`, { method: 'POST', json });
  api.runUntil = (runId, status) =>
    waitFor(`run ${runId} ${status}`, async () => {
      const { body } = await api.get(`/api/runs/${runId}`);
      return body?.status === status && body;
    });
  return api;
}

/** A part of an SDK stream, as the tests read it. */
export interface Part {
  id?: string;
  event: string;
  data: any;
}

/** Every part of an SDK stream. */
export async function collect(parts: AsyncIterable<unknown>): Promise<Part[]> {
  const out: Part[] = [];
  for await (const part of parts) out.push(part as Part);
  return out;
}
