import { messagesStateReducer } from '@langchain/langgraph';
import type { AnyGraph } from './graph-loader.js';

/** The stream modes the engine always reads: task starts and ends (spans, node events), checkpoints (the state mirror), writer data. */
export const ENGINE_MODES = ['tasks', 'checkpoints', 'custom'] as const;

/** A channel's reducer, where LangGraph keeps it (`BinaryOperatorAggregate.operator`, `DeltaChannel.reducer`). */
function reducerOf(channel: unknown): unknown {
  const c = channel as { operator?: unknown; reducer?: unknown } | null;
  return c?.operator ?? c?.reducer;
}

/** A runnable that is, or a sequence that holds, a chat model or an LLM (LangChain's `language_models` namespace). */
function isModel(runnable: unknown, depth = 0): boolean {
  if (runnable === null || typeof runnable !== 'object' || depth > 4) return false;
  const r = runnable as { lc_namespace?: unknown; steps?: unknown; bound?: unknown };
  if (Array.isArray(r.lc_namespace) && r.lc_namespace.some((part) => part === 'chat_models' || part === 'llms')) return true;
  if (Array.isArray(r.steps)) return r.steps.some((step) => isModel(step, depth + 1));
  return r.bound !== undefined && r.bound !== runnable && isModel(r.bound, depth + 1);
}

/** Whether `graph` (or a subgraph among its nodes) holds messages in its state or has a chat model as a node. */
function holdsMessages(graph: AnyGraph, depth: number): boolean {
  const channels = Object.entries((graph.channels ?? {}) as Record<string, unknown>);
  if (channels.some(([name, channel]) => name === 'messages' || reducerOf(channel) === messagesStateReducer || String((reducerOf(channel) as { name?: unknown })?.name).startsWith('messages'))) return true;
  for (const node of Object.values((graph.nodes ?? {}) as Record<string, { bound?: unknown }>)) {
    const bound = node?.bound;
    if (isModel(bound)) return true;
    if (depth < 3 && bound && typeof bound === 'object' && 'channels' in bound && 'nodes' in bound && holdsMessages(bound as AnyGraph, depth + 1)) return true;
  }
  return false;
}

const known = new WeakMap<object, boolean>();

/**
 * Whether a run of `graph` streams LangGraph's `messages` mode (chat model tokens, the messages
 * nodes return) when its client did not ask for it: when the graph can have messages to tell —
 * a channel named `messages` or with LangGraph's messages reducer (`MessagesAnnotation`,
 * `MessagesZodState`, `addMessages`), in the graph or a subgraph node, or a chat model as a node.
 * The mode is not free: it puts a callback handler on every runnable of every superstep.
 */
export function streamsMessages(graph: AnyGraph): boolean {
  const key = (graph.nodes ?? graph) as object;
  let answer = known.get(key);
  if (answer === undefined) {
    answer = holdsMessages(graph, 0);
    known.set(key, answer);
  }
  return answer;
}
