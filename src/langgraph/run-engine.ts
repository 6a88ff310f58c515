import { Command, GraphRecursionError } from '@langchain/langgraph';
import { AppError, isUnavailable } from '../domain/errors.js';
import { nowIso } from '../domain/time.js';
import { withErrorClass } from '../domain/error-class.js';
import { clip, END_NODE, errorMessage, MAX_ERROR_CHARS, MAX_STREAM_EVENT_BYTES, type JsonObject, type Run } from '../domain/types.js';
import type { GraphCheckpointEntry } from '../ports/graph-storage.js';
import type { GraphRunInput } from '../ports/graph-threads.js';
import type { RunAttempt } from '../runtime/run/run-attempt.js';
import type { GraphAgent, GraphSource } from '../runtime/agent.js';
import type { RunEngine } from '../runtime/run/run-engine.js';
import type { AnyGraph, GraphLoader } from './graph-loader.js';
import { answerOf, graphApprovalId, interruptsOf, parseRunInput, pauseRequestOf, streamInputOf, type PendingInterrupt } from './run-input.js';
import { clientChunkOf } from './stream-chunks.js';
import { SuperstepRecorder, type TaskChunk } from './superstep-recorder.js';
import { TraceCallbacks } from './trace-callbacks.js';
import { ENGINE_MODES, streamsMessages } from './stream-modes.js';
import { eventData, nodeIdOf, StateMirror } from './values.js';

/** The LangGraph stream modes a run may publish for a LangGraph client (`messages-tuple` is `messages`). */
const LIBRARY_MODES: ReadonlySet<string> = new Set(['values', 'updates', 'messages', 'custom', 'debug', 'tasks', 'checkpoints']);

/**
 * Reads a stream as fast as it comes into a buffer and hands its chunks out in order. LangGraph
 * drops the chunks not yet read when a graph fails; the engine writes to storage per chunk, so
 * it reads them all first: a failed run still records every step before its failure.
 */
async function* buffered<T>(stream: AsyncIterable<T>): AsyncGenerator<{ chunk: T; at: string }> {
  /** Each chunk with when it came (a task's start and end times, however late they are handled). */
  const chunks: { chunk: T; at: string }[] = [];
  let done = false;
  let failure: { error: unknown } | undefined;
  let wake: (() => void) | undefined;
  void (async () => {
    try {
      for await (const chunk of stream) {
        chunks.push({ chunk, at: nowIso() });
        wake?.();
      }
    } catch (error) {
      failure = { error };
    } finally {
      done = true;
      wake?.();
    }
  })();
  for (;;) {
    if (chunks.length > 0) {
      yield chunks.shift()!;
      continue;
    }
    if (done) break;
    await new Promise<void>((resolve) => (wake = resolve));
    wake = undefined;
  }
  if (failure) throw failure.error;
}

/**
 * The LangGraph engine: drives a run of a graph agent by streaming the compiled graph with
 * agentplane's checkpointer and store (`thread_id` = the session id, the run's abort signal).
 * Per superstep of the root graph, one journal step: a native checkpoint mirroring the values,
 * the spans and `node_end` of the tasks that returned, the `node_start` of the tasks planned;
 * `custom` events for `config.writer` data (`custom`) and chat model tokens (`messages`); every
 * `interrupt()` a pending approval; a re-delivered job continues from the last checkpoint.
 */
export function createGraphRunEngine(graphs: GraphLoader): RunEngine<GraphAgent> {
  return { drive: (attempt, agent) => drive(attempt, agent.graph, graphs) };
}

async function drive(attempt: RunAttempt, source: GraphSource, graphs: GraphLoader): Promise<Run | undefined> {
  const { job, run, signal, tenant, store } = attempt;

  // What the run was asked: its input or command, and a LangGraph client's run options.
  const asked = parseRunInput(await store.runs.getRunInput(tenant, run.id));
  // The thread's latest checkpoint is where the engine reads and goes on from; a client's
  // `checkpoint_id` (a fork) is where a fresh run starts, only.
  const { checkpoint_id: forkFrom, ...given } = asked.config?.configurable ?? {};
  // The graph's defaults (LANGGRAPH_CONFIG), under what the run was given.
  const defaults = source.defaults;
  const defaultConfig = (defaults?.config ?? {}) as { configurable?: Record<string, unknown>; tags?: unknown; metadata?: unknown; recursion_limit?: unknown };
  // As LangGraph's server: the graph and assistant of the run are in its configurable (and so in its checkpoints' metadata).
  const configurable = {
    ...defaultConfig.configurable,
    ...given,
    graph_id: job.agent_id,
    ...(asked.assistant_id ? { assistant_id: asked.assistant_id } : {}),
    thread_id: job.session_id,
    run_id: run.id,
  };
  const tags = [...(Array.isArray(defaultConfig.tags) ? (defaultConfig.tags as string[]) : []), ...(asked.config?.tags ?? [])];
  // The run's metadata and its config's reach its checkpoints' metadata (getHistory({ metadata }) finds them).
  const metadata = { ...(isRecord(defaultConfig.metadata) ? defaultConfig.metadata : {}), ...asked.metadata, ...asked.config?.metadata };
  const context = isRecord(asked.context) || defaults?.context ? { ...defaults?.context, ...(isRecord(asked.context) ? asked.context : {}) } : undefined;
  const recursionLimit = typeof defaultConfig.recursion_limit === 'number' ? defaultConfig.recursion_limit : undefined;
  const graph = await graphs.graphFor(source, tenant, { configurable });
  const config = { configurable };
  /** The LangGraph stream modes a LangGraph client asked for: their chunks go out as `stream` events. */
  const wanted = new Set((asked.stream_mode ?? []).map((mode) => (mode === 'messages-tuple' ? 'messages' : mode)).filter((mode) => LIBRARY_MODES.has(mode)));
  // The first mirrored checkpoint writes every value; the state of a graph session is only ever
  // the graph's, so nothing needs reading first.
  const mirror = new StateMirror({});

  const start = await startOf(attempt, graphs, graph, config, asked);
  if (start.kind === 'pause') return pause(start.pending);
  const { input, fresh } = start;
  // The graph's first read of the thread answers the checkpoint read just now (a fork reads its own).
  graph.checkpointer = graphs.storageOf(tenant).checkpointer.primedWith(config, start.stored);
  /** The checkpoint the graph goes on from when it is not given new input: LangGraph streams it again, already recorded. */
  let resumedFrom = start.resumedFrom;

  // The graph stops when the run is cancelled, or when a write finds the run no longer running.
  // (A listener, not AbortSignal.any: that one costs more than the rest of a short run's signals.)
  const halt = new AbortController();
  const graphSignal = halt.signal;
  const onCancel = () => halt.abort(signal.reason);
  if (signal.aborted) onCancel();
  else signal.addEventListener('abort', onCancel, { once: true });
  // Tracing on: tasks, model and tool calls as spans under the attempt's (LangChain's callbacks).
  const traced = TraceCallbacks.forAttempt(run.id);
  const steps = new SuperstepRecorder(attempt, traced);
  /** The last checkpoint (nothing next): the run completes with it once the graph is done. */
  let last: { patch: JsonObject } | undefined;
  let next: string[] = [];
  let sawInterrupt = false;
  /** The graph failed with `message`: its open tasks' spans say so, the run fails. */
  const failed = async (message: string, error?: unknown) => {
    await steps.flush('error', message);
    attempt.logger.warn({ err: error ?? message, run_id: run.id }, 'graph run failed');
    return attempt.fail(message);
  };

  // The graph's own limit, else RUN_STEP_LIMIT; what the run (or the graph's defaults) asks can only lower it.
  const limit = graphs.recursionLimitOf(graph, asked.config?.recursion_limit ?? recursionLimit);
  try {
    const options = {
      ...(fresh && typeof forkFrom === 'string' ? { configurable: { ...configurable, checkpoint_id: forkFrom } } : config),
      ...(tags.length > 0 ? { tags } : {}),
      ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
      ...(context ? { context } : {}),
      ...(asked.interrupt_before ? { interruptBefore: asked.interrupt_before } : {}),
      ...(asked.interrupt_after ? { interruptAfter: asked.interrupt_after } : {}),
      signal: graphSignal,
      recursionLimit: limit,
      // Each checkpoint is stored before the next step starts: a step is announced (and
      // recorded) only once LangGraph has it, so a worker taking over never repeats a step.
      durability: 'sync' as const,
      // Model tokens (`messages`) when the graph can have messages or the client asked for them.
      streamMode: [...new Set([...ENGINE_MODES, ...(streamsMessages(graph) ? ['messages'] : []), ...wanted])] as (typeof ENGINE_MODES)[number][],
      subgraphs: true,
      ...(traced ? { callbacks: [traced] } : {}),
    };
    // The `events` mode: the chunks come out of LangChain's streamEvents (v2), its events beside them.
    const stream = asked.stream_mode?.includes('events') ? withEvents(graph, input, options) : await graph.stream(input, options);
    for await (const { chunk: item, at } of buffered(stream as AsyncIterable<Chunk | LangChainEvent>)) {
      if (!Array.isArray(item)) {
        await attempt.publish({ type: 'stream', name: 'events', data: eventData(item.event, MAX_STREAM_EVENT_BYTES) });
        continue;
      }
      const chunk = item;
      const [path, mode, data] = chunk;
      const namespace = namespaceOf(path, mode, data);
      const root = namespace.length === 0;
      if (wanted.has(mode) && (root || asked.stream_subgraphs)) {
        await attempt.publish({ type: 'stream', name: root ? mode : `${mode}|${namespace.join('|')}`, data: eventData(clientChunkOf(mode, data), MAX_STREAM_EVENT_BYTES) });
      }
      if (mode === 'tasks' && root) {
        if ((await steps.task(data as TaskChunk, at)) === 'interrupted') sawInterrupt = true;
      } else if (mode === 'checkpoints' && root) {
        const checkpoint = data as { values: unknown; next: string[]; metadata?: { source?: string }; config?: { configurable?: { checkpoint_id?: unknown } } };
        next = checkpoint.next;
        // The run's first native checkpoint (at __start__) stands for LangGraph's input checkpoint.
        if (checkpoint.metadata?.source === 'input') continue;
        // The checkpoint a resumed or taken-over run goes on from is recorded already: only its tasks start again.
        if (resumedFrom !== undefined && checkpoint.config?.configurable?.checkpoint_id === resumedFrom) {
          resumedFrom = undefined;
          mirror.patch(checkpoint.values);
          for (const node of next) await attempt.publish({ type: 'node_start', node });
          continue;
        }
        const patch = mirror.patch(checkpoint.values);
        // Nothing next: the run completes with this checkpoint once the graph has stored it.
        if (next.length === 0) {
          last = { patch };
          continue;
        }
        const recorded = await steps.step(patch, nodeIdOf(next), next);
        if (recorded.kind === 'stopped') return stopped();
        if (recorded.kind === 'refused') return failed(recorded.message);
      } else if (mode === 'custom') {
        await attempt.publish({ type: 'custom', node: steps.nodeOf(), name: 'custom', data: eventData(data) });
      } else if (mode === 'messages') {
        const [message, metadata] = data as [unknown, Record<string, unknown> | undefined];
        await attempt.publish({ type: 'custom', node: steps.nodeOf(metadata), name: 'messages', data: eventData(message) });
      }
    }
  } catch (error) {
    // Cancelled (the run's signal, or a write refused once the run was no longer running).
    if (graphSignal.aborted || (error instanceof AppError && error.code === 'conflict')) return stopped();
    if (isUnavailable(error)) throw error;
    const message =
      error instanceof GraphRecursionError
        ? `The graph exceeded its step limit (recursionLimit ${limit}): ${errorMessage(error)}`
        : errorMessage(error);
    // The class stays with the run's error (`CustomError: Boo!`): LangGraph clients see it.
    return failed(clip(withErrorClass(error, message), MAX_ERROR_CHARS), error);
  } finally {
    signal.removeEventListener('abort', onCancel);
  }
  if (signal.aborted) return stopped();

  if (sawInterrupt || (next.length > 0 && !last)) {
    // The interrupts the tasks raised, as the stream told them; a stop before or after a node
    // (nothing raised) asks the state what waits.
    const pending = sawInterrupt ? steps.interrupts() : interruptsOf(await graph.getState(config));
    if (pending.length > 0) {
      // Tasks that returned in the paused step keep their writes: they are not run again.
      await steps.flush('interrupted');
      return pause(pending);
    }
  }
  if (last) {
    const recorded = await steps.step(last.patch, END_NODE);
    if (recorded.kind === 'stopped') return stopped();
    if (recorded.kind === 'refused') return failed(recorded.message);
    if (recorded.result.completed) return attempt.completedBy({ ...recorded.result, completed: recorded.result.completed });
  }
  // Stopped without a last checkpoint (an interrupt_before with nothing pending): the run completes as it is.
  await steps.flush('ok');
  return attempt.complete();

  /** The run was cancelled (the canceller ended it) or is gone: the open tasks' spans say so. */
  async function stopped(): Promise<Run | undefined> {
    halt.abort();
    // A run that is gone (deleted, lost with the backend's data) leaves nothing behind.
    const current = await attempt.current();
    if (current) await steps.flush('cancelled');
    return current;
  }

  /** The run pauses: one pending approval per interrupt (a run paused on several resumes once each is answered). */
  async function pause(interrupts: PendingInterrupt[]): Promise<Run | undefined> {
    const paused = await attempt.pause(interrupts.map((pending) => pauseRequestOf(run.id, pending)));
    return paused.kind === 'paused' ? paused.run : attempt.current();
  }
}

/** A chunk of the graph's stream (subgraphs on): its namespace, its mode, its data. */
type Chunk = [string[], string, unknown];
/** Any other event of LangChain's streamEvents v2 (`on_chain_start`, `on_chat_model_stream`, …). */
interface LangChainEvent {
  event: { event: string; run_id: string; tags?: string[]; data?: { chunk?: unknown } };
}

/**
 * The graph's stream read through LangChain's `streamEvents` v2, as LangGraph's server does for
 * the `events` mode: the root run's `on_chain_stream` events carry the graph's chunks; every
 * other event (but those tagged `langsmith:hidden`) goes out as it is, in the order it came.
 */
async function* withEvents(graph: AnyGraph, input: unknown, options: Record<string, unknown>): AsyncGenerator<Chunk | LangChainEvent> {
  let root: string | undefined;
  const events = graph.streamEvents(input as never, { ...options, version: 'v2' } as never) as unknown as AsyncIterable<LangChainEvent['event']>;
  for await (const event of events) {
    // The first event is the graph's own start: its run is the root.
    root ??= event.run_id;
    if (event.tags?.includes('langsmith:hidden')) continue;
    if (event.event === 'on_chain_stream' && event.run_id === root) yield event.data!.chunk as Chunk;
    else yield { event };
  }
}

/**
 * The namespace of a chunk: [] for the root graph's, a subgraph's path otherwise. LangGraph 1.1
 * (the version a graph may bring with it) streams a run going on from a checkpoint with [""] for
 * the root, and a model's `messages` under the namespace of the task that called it (its
 * metadata's `langgraph_checkpoint_ns`, the task's own segment last); later versions drop that
 * segment: a model called in a root node streams under [], as the other modes.
 */
function namespaceOf(path: string[], mode: string, data: unknown): string[] {
  const namespace = path.filter((part) => part !== '');
  if (mode !== 'messages' || namespace.length === 0) return namespace;
  const metadata = Array.isArray(data) ? (data[1] as { langgraph_checkpoint_ns?: unknown } | undefined) : undefined;
  return metadata?.langgraph_checkpoint_ns === namespace.join('|') ? namespace.slice(0, -1) : namespace;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Where a run starts: new input (a fresh run), the answers of a resume, null to go on; or a
 * pause still waiting on answers. `stored` is the thread's latest checkpoint as read to decide
 * it (null: none), handed to the graph's first read.
 */
type Start =
  | { kind: 'stream'; input: unknown; resumedFrom: unknown; fresh: boolean; stored: GraphCheckpointEntry | null }
  | { kind: 'pause'; pending: PendingInterrupt[] };

/**
 * What to stream for a run: its input or command (a fresh run); a resume's answers; null to go
 * on from the last checkpoint (a re-delivered job whose run got that far, a session resumed).
 * One read of the latest checkpoint decides it: the interrupts a resume answers are its pending
 * `__interrupt__` writes (a state snapshot, which plans the next tasks, only when one is still
 * unanswered and the pause is asked again).
 */
async function startOf(attempt: RunAttempt, graphs: GraphLoader, graph: AnyGraph, config: { configurable: Record<string, unknown> }, asked: GraphRunInput): Promise<Start> {
  const { job, run, tenant, store } = attempt;
  const saver = graphs.storageOf(tenant).checkpointer;
  const stored = await saver.entryFor(config);
  if (!job.approval_id) {
    const started = job.kind === 'resume' || (stored !== null && (await saver.metadataOf(stored) as Record<string, unknown>).run_id === run.id);
    if (started) return { kind: 'stream', input: null, resumedFrom: stored?.record.checkpointId, fresh: false, stored };
    return { kind: 'stream', input: streamInputOf(asked), resumedFrom: undefined, fresh: true, stored };
  }
  const resume: Record<string, unknown> = {};
  let unanswered = false;
  const interrupts = stored ? (await saver.interruptsOf(stored)).filter((pending) => typeof pending.id === 'string') : [];
  for (const pending of interrupts) {
    const answer = answerOf(await store.approvals.getApproval(tenant, graphApprovalId(run.id, pending.id as string)));
    if (answer) resume[pending.id as string] = answer.value;
    else unanswered = true;
  }
  // A pause on several interrupts resumes once each is answered.
  if (unanswered) return { kind: 'pause', pending: interruptsOf(await graph.getState(config)).filter((pending) => !(pending.id in resume)) };
  let input: unknown = null;
  if (Object.keys(resume).length > 0) {
    input = new Command({ resume });
  } else if (interrupts.length === 0) {
    // The state was edited during the pause: the new checkpoint's task asks afresh (another
    // interrupt id), and its first interrupt() takes the answer given.
    const answer = answerOf(await store.approvals.getApproval(tenant, job.approval_id));
    if (answer) input = new Command({ resume: answer.value });
  }
  return { kind: 'stream', input, resumedFrom: stored?.record.checkpointId, fresh: false, stored };
}
