import { MAX_STREAM_EVENT_BYTES, type JsonObject } from '../domain/types.js';
import type { RunAttempt, StepOutcome } from '../runtime/run/run-attempt.js';
import type { Chunk, LangChainEvent } from './graph-stream.js';
import { clientChunkOf } from './stream-chunks.js';
import type { SuperstepRecorder, TaskChunk } from './superstep-recorder.js';
import { eventData, nodeIdOf, StateMirror } from './values.js';

/** A `checkpoints` chunk of the root graph. */
interface CheckpointChunk {
  values: unknown;
  next: string[];
  metadata?: { source?: string };
  config?: { configurable?: { checkpoint_id?: unknown } };
}

/** What the stream came to once it ended: the ending reads it. */
export interface Streamed {
  /** The last checkpoint (nothing next): the run completes with it once the graph is done. */
  last: { patch: JsonObject } | undefined;
  /** The nodes the latest checkpoint planned next. */
  next: string[];
  /** A task raised an interrupt. */
  sawInterrupt: boolean;
}

/** Which of the stream's chunks go to a LangGraph client, and the checkpoint a resumed run goes on from. */
export interface RouterOptions {
  /** The LangGraph stream modes the client asked for. */
  wanted: ReadonlySet<string>;
  /** The client asked for the subgraphs' chunks too. */
  subgraphs: boolean | undefined;
  /** The checkpoint the graph goes on from (not given new input): LangGraph streams it again, already recorded. */
  resumedFrom: unknown;
}

/**
 * What each chunk of the graph's stream does: a `stream` event for the modes a LangGraph client
 * asked for; root `tasks` to the superstep's spans and node events; root `checkpoints` to a
 * journal step (the state mirrored); `custom` writer data and `messages` tokens as `custom`
 * events; a LangChain event (the `events` mode) as a `stream` event.
 */
export class ChunkRouter {
  /** The first mirrored checkpoint writes every value; the state of a graph session is only ever the graph's, so nothing needs reading first. */
  private readonly mirror = new StateMirror({});
  private resumedFrom: unknown;
  private readonly streamed: Streamed = { last: undefined, next: [], sawInterrupt: false };

  constructor(
    private readonly attempt: RunAttempt,
    private readonly steps: SuperstepRecorder,
    private readonly options: RouterOptions,
  ) {
    this.resumedFrom = options.resumedFrom;
  }

  /** What the stream came to so far. */
  get result(): Readonly<Streamed> {
    return this.streamed;
  }

  /** Takes one chunk (`at`: when it came); resolves with the outcome of the journal step it recorded, if it recorded one. */
  async route(item: Chunk | LangChainEvent, at: string): Promise<StepOutcome | undefined> {
    const { attempt, steps } = this;
    if (!Array.isArray(item)) {
      await attempt.publish({ type: 'stream', name: 'events', data: eventData(item.event, MAX_STREAM_EVENT_BYTES) });
      return undefined;
    }
    const [path, mode, data] = item;
    const namespace = namespaceOf(path, mode, data);
    const root = namespace.length === 0;
    if (this.options.wanted.has(mode) && (root || this.options.subgraphs)) {
      await attempt.publish({ type: 'stream', name: root ? mode : `${mode}|${namespace.join('|')}`, data: eventData(clientChunkOf(mode, data), MAX_STREAM_EVENT_BYTES) });
    }
    if (mode === 'tasks' && root) {
      if ((await steps.task(data as TaskChunk, at)) === 'interrupted') this.streamed.sawInterrupt = true;
    } else if (mode === 'checkpoints' && root) {
      return this.checkpoint(data as CheckpointChunk);
    } else if (mode === 'custom') {
      await attempt.publish({ type: 'custom', node: steps.nodeOf(), name: 'custom', data: eventData(data) });
    } else if (mode === 'messages') {
      const [message, metadata] = data as [unknown, Record<string, unknown> | undefined];
      await attempt.publish({ type: 'custom', node: steps.nodeOf(metadata), name: 'messages', data: eventData(message) });
    }
    return undefined;
  }

  /** A checkpoint of the root graph: a journal step, unless it is the input's, the one a resumed run goes on from, or the last. */
  private async checkpoint(checkpoint: CheckpointChunk): Promise<StepOutcome | undefined> {
    const next = (this.streamed.next = checkpoint.next);
    // The run's first native checkpoint (at __start__) stands for LangGraph's input checkpoint.
    if (checkpoint.metadata?.source === 'input') return undefined;
    // The checkpoint a resumed or taken-over run goes on from is recorded already: only its tasks start again.
    if (this.resumedFrom !== undefined && checkpoint.config?.configurable?.checkpoint_id === this.resumedFrom) {
      this.resumedFrom = undefined;
      this.mirror.patch(checkpoint.values);
      for (const node of next) await this.attempt.publish({ type: 'node_start', node });
      return undefined;
    }
    const patch = this.mirror.patch(checkpoint.values);
    // Nothing next: the run completes with this checkpoint once the graph has stored it.
    if (next.length === 0) {
      this.streamed.last = { patch };
      return undefined;
    }
    return this.steps.step(patch, nodeIdOf(next), next);
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
