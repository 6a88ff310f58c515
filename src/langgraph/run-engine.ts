import type { Run } from '../domain/types.js';
import type { GraphAgent, GraphSource } from '../runtime/agent.js';
import type { RunAttempt } from '../runtime/run/run-attempt.js';
import type { RunEngine } from '../runtime/run/run-engine.js';
import { ChunkRouter } from './chunk-router.js';
import type { GraphLoader } from './graph-loader.js';
import { buffered, withEvents, type Chunk, type LangChainEvent } from './graph-stream.js';
import { runConfigOf, streamOptionsOf } from './run-config.js';
import { GraphRunEnding, pauseOn } from './run-ending.js';
import { parseRunInput } from './run-input.js';
import { startOf } from './run-start.js';
import { SuperstepRecorder } from './superstep-recorder.js';
import { TraceCallbacks } from './trace-callbacks.js';

/**
 * The LangGraph engine: drives a run of a graph agent by streaming the compiled graph with
 * agentplane's checkpointer and store (`thread_id` = the session id, the run's abort signal).
 * Per superstep of the root graph, one journal step: a native checkpoint mirroring the values,
 * the spans and `node_end` of the tasks that returned, the `node_start` of the tasks planned;
 * `custom` events for `config.writer` data (`custom`) and chat model tokens (`messages`); every
 * `interrupt()` a pending approval; a re-delivered job continues from the last checkpoint.
 * The parts: the run's config and start (run-config.ts, run-start.ts), what each chunk does
 * (chunk-router.ts), how the run ends (run-ending.ts).
 */
export function createGraphRunEngine(graphs: GraphLoader): RunEngine<GraphAgent> {
  return { drive: (attempt, agent) => drive(attempt, agent.graph, graphs) };
}

async function drive(attempt: RunAttempt, source: GraphSource, graphs: GraphLoader): Promise<Run | undefined> {
  const { run, signal, tenant, store } = attempt;
  // What the run was asked: its input or command, and a LangGraph client's run options.
  const asked = parseRunInput(await store.runs.getRunInput(tenant, run.id));
  const config = runConfigOf(attempt, source, asked);
  const graph = await graphs.graphFor(source, tenant, { configurable: config.configurable });
  /** The thread the run reads and goes on from: its latest checkpoint. */
  const thread = { configurable: config.configurable };
  const start = await startOf(attempt, graphs, graph, thread, asked);
  if (start.kind === 'pause') return pauseOn(attempt, start.pending);
  // The graph's first read of the thread answers the checkpoint read just now (a fork reads its own).
  graph.checkpointer = graphs.storageOf(tenant).checkpoints.primedWith(thread, start.stored);

  const halt = haltOn(signal);
  const traced = TraceCallbacks.forAttempt(run.id);
  const steps = new SuperstepRecorder(attempt, traced);
  const ending = new GraphRunEnding(attempt, steps, halt.controller);
  const router = new ChunkRouter(attempt, steps, { wanted: config.wanted, subgraphs: asked.stream_subgraphs, resumedFrom: start.resumedFrom });
  // The graph's own limit, else RUN_STEP_LIMIT; what the run (or the graph's defaults) asks can only lower it.
  const limit = graphs.recursionLimitOf(graph, asked.config?.recursion_limit ?? config.recursionLimit);
  try {
    const options = streamOptionsOf(config, asked, graph, { fresh: start.fresh, signal: halt.controller.signal, recursionLimit: limit, traced });
    // The `events` mode: the chunks come out of LangChain's streamEvents (v2), its events beside them.
    const stream = asked.stream_mode?.includes('events') ? withEvents(graph, start.input, options) : await graph.stream(start.input, options);
    for await (const { chunk, at } of buffered(stream as AsyncIterable<Chunk | LangChainEvent>)) {
      const step = await router.route(chunk, at);
      const ended = step && ending.unrecorded(step);
      if (ended) return ended;
    }
  } catch (error) {
    return ending.thrown(error, limit);
  } finally {
    halt.release();
  }
  if (signal.aborted) return ending.stopped();
  return ending.streamEnded(router.result, graph, thread);
}

/**
 * The graph stops when the run is cancelled (`signal`), or when a write finds the run no longer
 * running (the ending aborts `controller`). A listener, not AbortSignal.any: that one costs more
 * than the rest of a short run's signals. `release` once the stream is done.
 */
function haltOn(signal: AbortSignal): { controller: AbortController; release: () => void } {
  const controller = new AbortController();
  const onCancel = () => controller.abort(signal.reason);
  if (signal.aborted) onCancel();
  else signal.addEventListener('abort', onCancel, { once: true });
  return { controller, release: () => signal.removeEventListener('abort', onCancel) };
}
