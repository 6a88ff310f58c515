import type { GraphRunInput } from '../ports/graph-threads.js';
import type { GraphSource } from '../runtime/agent.js';
import type { RunAttempt } from '../runtime/run/run-attempt.js';
import type { AnyGraph } from './graph-loader.js';
import { ENGINE_MODES, streamsMessages } from './stream-modes.js';
import type { TraceCallbacks } from './trace-callbacks.js';

/** The LangGraph stream modes a run may publish for a LangGraph client (`messages-tuple` is `messages`). */
const LIBRARY_MODES: ReadonlySet<string> = new Set(['values', 'updates', 'messages', 'custom', 'debug', 'tasks', 'checkpoints']);

/** What a run of a graph is given beside its input: the graph's defaults (LANGGRAPH_CONFIG), under what the run asked. */
export interface RunConfig {
  /** As LangGraph's server: the graph and assistant of the run are in its configurable (and so in its checkpoints' metadata). */
  configurable: Record<string, unknown>;
  /**
   * A client's `checkpoint_id`: where a fresh run starts (a fork), only. The thread's latest
   * checkpoint is where the engine reads and goes on from.
   */
  forkFrom: unknown;
  tags: string[];
  /** The run's metadata and its config's: they reach its checkpoints' metadata (getHistory({ metadata }) finds them). */
  metadata: Record<string, unknown>;
  context: Record<string, unknown> | undefined;
  /** The graph defaults' recursion limit, when they give one. */
  recursionLimit: number | undefined;
  /** The LangGraph stream modes a LangGraph client asked for: their chunks go out as `stream` events. */
  wanted: ReadonlySet<string>;
}

/** The config of the attempt's run of `source`, as `asked`. */
export function runConfigOf(attempt: RunAttempt, source: GraphSource, asked: GraphRunInput): RunConfig {
  const { job, run } = attempt;
  const { checkpoint_id: forkFrom, ...given } = asked.config?.configurable ?? {};
  const defaults = source.defaults;
  const defaultConfig = (defaults?.config ?? {}) as { configurable?: Record<string, unknown>; tags?: unknown; metadata?: unknown; recursion_limit?: unknown };
  const configurable = {
    ...defaultConfig.configurable,
    ...given,
    graph_id: job.agent_id,
    ...(asked.assistant_id ? { assistant_id: asked.assistant_id } : {}),
    thread_id: job.session_id,
    run_id: run.id,
  };
  const askedContext = isRecord(asked.context) ? asked.context : undefined;
  return {
    configurable,
    forkFrom,
    tags: [...(Array.isArray(defaultConfig.tags) ? (defaultConfig.tags as string[]) : []), ...(asked.config?.tags ?? [])],
    metadata: { ...(isRecord(defaultConfig.metadata) ? defaultConfig.metadata : {}), ...asked.metadata, ...asked.config?.metadata },
    context: askedContext || defaults?.context ? { ...defaults?.context, ...askedContext } : undefined,
    recursionLimit: typeof defaultConfig.recursion_limit === 'number' ? defaultConfig.recursion_limit : undefined,
    wanted: new Set((asked.stream_mode ?? []).map((mode) => (mode === 'messages-tuple' ? 'messages' : mode)).filter((mode) => LIBRARY_MODES.has(mode))),
  };
}

/** What the attempt's stream of the graph is given beside its config. */
export interface StreamSettings {
  /** A fresh run (new input): it starts from the fork asked for, if any. */
  fresh: boolean;
  /** Stops the graph. */
  signal: AbortSignal;
  recursionLimit: number;
  /** Tracing on: tasks, model and tool calls as spans under the attempt's (LangChain's callbacks). */
  traced: TraceCallbacks | undefined;
}

/** LangGraph's options for the attempt's stream of `graph`. */
export function streamOptionsOf(config: RunConfig, asked: GraphRunInput, graph: AnyGraph, settings: StreamSettings) {
  const { configurable, forkFrom, tags, metadata, context, wanted } = config;
  return {
    configurable: settings.fresh && typeof forkFrom === 'string' ? { ...configurable, checkpoint_id: forkFrom } : configurable,
    ...(tags.length > 0 ? { tags } : {}),
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
    ...(context ? { context } : {}),
    ...(asked.interrupt_before ? { interruptBefore: asked.interrupt_before } : {}),
    ...(asked.interrupt_after ? { interruptAfter: asked.interrupt_after } : {}),
    signal: settings.signal,
    recursionLimit: settings.recursionLimit,
    // Each checkpoint is stored before the next step starts: a step is announced (and
    // recorded) only once LangGraph has it, so a worker taking over never repeats a step.
    durability: 'sync' as const,
    // Model tokens (`messages`) when the graph can have messages or the client asked for them.
    streamMode: [...new Set([...ENGINE_MODES, ...(streamsMessages(graph) ? ['messages'] : []), ...wanted])] as (typeof ENGINE_MODES)[number][],
    subgraphs: true,
    ...(settings.traced ? { callbacks: [settings.traced] } : {}),
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
