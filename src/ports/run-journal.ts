import type { Checkpoint, JsonObject, Run, RunEvent, Span } from '../domain/types.js';
import type { CheckpointMeta, UpdatedRun } from './store.js';

/** A node that returned, with its span. */
export interface EndedNode {
  node: string;
  span: Span;
}

/**
 * One step of a run as an engine records it: the nodes that returned (one for an agent's node;
 * a graph's superstep may end several parallel tasks, and its first step none), the checkpoint
 * they lead to, and the nodes that start next.
 */
export interface NodeStep {
  /** The nodes that returned, each with its span and a `node_end` event, in order. */
  ended: readonly EndedNode[];
  /** The step's patch (JSON). */
  patch: JsonObject;
  /** The node the session runs next (the checkpoint's node_id); `__end__` completes the run. */
  next: string;
  /** The nodes whose `node_start` events follow (a graph's parallel tasks). @defaultValue [next], none at `__end__` */
  starts?: readonly string[];
}

export interface StepResult {
  checkpoint: CheckpointMeta;
  /** The run, when this step completed it (`next` was `__end__`). */
  completed?: UpdatedRun;
  /** With `completed`: false when no schedule fire is linked to the run (nothing to settle). */
  scheduled?: boolean;
  /** Every event the step published (metrics). */
  published: RunEvent[];
}

/**
 * The run path of a worker, each call one atomic step on Redis (one round trip): taking a run,
 * and recording each node with its checkpoint, span and events, the last one completing the
 * run. What the executor would otherwise do in four to six store and bus calls per node.
 */
export interface RunJournal {
  /**
   * The run becomes `running` (from queued, or running when its job is re-delivered) and the
   * `node_start` event of the node its session runs next is published (none at `__end__`, nor
   * with `announce` false: an engine that announces its own tasks).
   * Throws `not_found`, or `conflict` when the run is in another status. Resolves with the run
   * and the event published, if any, and its latest checkpoint when reading it was cheap (the
   * caller reads it otherwise).
   */
  begin(tenant: string, run: Pick<Run, 'id' | 'session_id' | 'agent_id'>, options?: { announce?: boolean }): Promise<{ run: Run; published?: RunEvent; checkpoint?: Checkpoint }>;
  /**
   * Records a step: its checkpoint (`conflict` unless the run is the session's running current
   * run: it was cancelled), the spans and `node_end` events of the nodes that returned; then the
   * `node_start` events of the next nodes, or, when `next` is `__end__`, the run's completion: status `completed`, its root span
   * (from its `created_at`), the `completed` event. `payload_too_large` / `bad_request` when
   * the patch would take the state past a limit (nothing is written then).
   */
  step(tenant: string, run: Run, step: NodeStep): Promise<StepResult>;
}
