import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { Annotation, Command, END, MemorySaver, MessagesAnnotation, START, StateGraph, getStore, interrupt, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { AsyncBatchedStore } from '@langchain/langgraph-checkpoint';
import type { GraphCheckpointStore, GraphItemStore } from '../../src/ports/graph-storage.js';
import { MemoryGraphCheckpointStore } from '../../src/adapters/memory/graph-checkpoints.js';
import { MemoryGraphItemStore } from '../../src/adapters/memory/graph-items.js';
import { redisGraphCheckpointStore } from '../../src/adapters/redis/graph-checkpoints.js';
import { redisGraphItemStore } from '../../src/adapters/redis/graph-items.js';
import { tenantGraphStorage, withTenantStorage } from '../../src/langgraph/graph-storage.js';
import { uniquePrefix, useRedis } from '../support/redis.js';

const redis = useRedis();

const State = Annotation.Root({ ...MessagesAnnotation.spec, user: Annotation<string> });

/** A graph as a project writes it: compiled with its own MemorySaver, a review that interrupts, memory kept in the store. */
function buildGraph(saver: MemorySaver) {
  return new StateGraph(State)
    .addNode('review', (state) => {
      const answer = interrupt({ question: `Reply to "${String(state.messages.at(-1)?.content)}"?` }) as string;
      return { messages: [new AIMessage({ content: `reviewed: ${answer}`, id: randomUUID() })] };
    })
    .addNode('remember', async (state, config: LangGraphRunnableConfig) => {
      const previous = await config.store!.get(['memories', state.user], 'count');
      const count = Number(previous?.value.count ?? 0) + 1;
      await config.store!.put(['memories', state.user], 'count', { count });
      return { messages: [new AIMessage({ content: `turn ${count}`, id: randomUUID() })] };
    })
    .addEdge(START, 'review')
    .addEdge('review', 'remember')
    .addEdge('remember', END)
    .compile({ checkpointer: saver });
}

type Backends = () => { checkpoints: GraphCheckpointStore; items: GraphItemStore };

describe.each<[string, Backends]>([
  ['memory', () => ({ checkpoints: new MemoryGraphCheckpointStore(), items: new MemoryGraphItemStore() })],
  [
    'redis',
    () => {
      const client = redis.connect();
      const keyPrefix = uniquePrefix('lg-graph');
      return { checkpoints: redisGraphCheckpointStore(client, keyPrefix), items: redisGraphItemStore(client, { keyPrefix }) };
    },
  ],
])('a compiled LangGraph graph on our storage (%s)', (_name, backends) => {
  it('keeps its checkpoints, interrupts, messages and memory in ours, not in the saver it was compiled with', async () => {
    const { checkpoints, items } = backends();
    const tenant = `t-${randomUUID()}`;
    const own = new MemorySaver();
    const graph = withTenantStorage(buildGraph(own), tenantGraphStorage({ tenant, checkpoints, items, requireSession: false }));
    const config = { configurable: { thread_id: 'session-1' } };

    await graph.invoke({ messages: [new HumanMessage('hello')], user: 'ada' }, config);
    const paused = await graph.getState(config);
    expect(paused.next).toEqual(['review']);
    expect(paused.tasks[0]?.interrupts[0]?.value).toEqual({ question: 'Reply to "hello"?' });

    // Another process (a new saver on the same storage) answers the interrupt.
    const again = withTenantStorage(buildGraph(new MemorySaver()), tenantGraphStorage({ tenant, checkpoints, items, requireSession: false }));
    await again.invoke(new Command({ resume: 'yes' }), config);
    await again.invoke({ messages: [new HumanMessage('more')] }, config);
    await again.invoke(new Command({ resume: 'fine' }), config);

    const state = await again.getState(config);
    const messages = state.values.messages as BaseMessage[];
    expect(messages.map((m) => [m.constructor.name, m.content])).toEqual([
      ['HumanMessage', 'hello'],
      ['AIMessage', 'reviewed: yes'],
      ['AIMessage', 'turn 1'],
      ['HumanMessage', 'more'],
      ['AIMessage', 'reviewed: fine'],
      ['AIMessage', 'turn 2'],
    ]);
    expect(messages[1]).toBeInstanceOf(AIMessage);
    expect((await tenantGraphStorage({ tenant, checkpoints, items }).store.get(['memories', 'ada'], 'count'))?.value).toEqual({ count: 2 });
    expect(await own.getTuple(config)).toBeUndefined();

    // Another tenant sees no such thread.
    const stranger = withTenantStorage(buildGraph(new MemorySaver()), tenantGraphStorage({ tenant: `t-${randomUUID()}`, checkpoints, items, requireSession: false }));
    expect((await stranger.getState(config)).values).toEqual({});
  });

  it('gives its nodes and subgraphs our store as it is, with no batching loop polled for the run', async () => {
    const { checkpoints, items } = backends();
    const storage = tenantGraphStorage({ tenant: `t-${randomUUID()}`, checkpoints, items, requireSession: false });
    const Counter = Annotation.Root({ user: Annotation<string>, seen: Annotation<string[]>({ reducer: (a, b) => [...new Set([...a, ...b])], default: () => [] }) });
    /** What a node finds: whether `config.store` and `getStore()` are the tenant's store itself, and the count it kept. */
    const remember = (name: string) => async (state: { user: string }, config: LangGraphRunnableConfig) => {
      const store = config.store!;
      const found = `${name}: ${store === storage.store && getStore() === storage.store ? 'ours' : (store?.constructor.name ?? 'none')}`;
      // Operations given together, as a node gives them (LangGraph's wrapper would batch them).
      const [previous] = await Promise.all([store.get(['counts', state.user], name), store.put(['counts', state.user], `${name}-touched`, { at: 1 })]);
      await store.put(['counts', state.user], name, { count: Number(previous?.value.count ?? 0) + 1 });
      return { seen: [found] };
    };
    const inner = new StateGraph(Counter).addNode('inner', remember('inner')).addEdge(START, 'inner').addEdge('inner', END).compile();
    const graph = withTenantStorage(
      new StateGraph(Counter).addNode('outer', remember('outer')).addNode('sub', inner).addEdge(START, 'outer').addEdge('outer', 'sub').addEdge('sub', END).compile(),
      storage,
    );
    const started = vi.spyOn(AsyncBatchedStore.prototype, 'start');
    try {
      const config = { configurable: { thread_id: `session-${randomUUID()}` } };
      const first = await graph.invoke({ user: 'ada' }, config);
      await graph.invoke({ user: 'ada' }, config);
      // The root graph's nodes get our store; a subgraph, run as LangGraph runs it, wraps what it is given.
      expect(first.seen).toEqual(['outer: ours', 'inner: AsyncBatchedStore']);
      expect(started).toHaveBeenCalledTimes(2);
      const counts = await storage.store.search(['counts', 'ada']);
      expect(Object.fromEntries(counts.map((item) => [item.key, item.value]))).toEqual({ outer: { count: 2 }, 'outer-touched': { at: 1 }, inner: { count: 2 }, 'inner-touched': { at: 1 } });
    } finally {
      started.mockRestore();
    }
  });
});
