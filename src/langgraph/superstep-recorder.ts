import { errorMessage, type JsonObject } from '../domain/types.js';
import type { EndedNode } from '../ports/run-journal.js';
import type { RunAttempt, StepOutcome } from '../runtime/run/run-attempt.js';
import type { PendingInterrupt } from './run-input.js';
import type { TraceCallbacks } from './trace-callbacks.js';

/** A `tasks` chunk of the root graph: a task planned (with its input) or one that returned. */
export interface TaskChunk {
  id: string;
  name: string;
  input?: unknown;
  error?: unknown;
  interrupts?: unknown[];
}

/**
 * The tasks of the root graph between two checkpoints: their spans and node events, recorded
 * with the superstep's journal step (tasks that returned) or on their own (errors, interrupts).
 */
export class SuperstepRecorder {
  /** Tasks under way: their node and start. */
  private readonly tasks = new Map<string, { node: string; start: string }>();
  /** Tasks planned so far, in the order LangGraph planned them. */
  private readonly planned = new Map<string, number>();
  /** The interrupts tasks raised, with their task. */
  private readonly raised: { task: string; pending: PendingInterrupt }[] = [];
  /** Tasks that returned since the last checkpoint: recorded with the next one. */
  private readonly ended: EndedNode[] = [];

  /** @param traced the attempt's task spans (tracing on): a task's stored span carries the ids of its exported one. */
  constructor(
    private readonly attempt: RunAttempt,
    private readonly traced?: TraceCallbacks,
  ) {}

  /** Takes a task's start or end; an end with an error or an interrupt is recorded at once. */
  async task(task: TaskChunk, at: string): Promise<'planned' | 'ok' | 'error' | 'interrupted'> {
    const { attempt } = this;
    if ('input' in task) {
      this.tasks.set(task.id, { node: task.name, start: at });
      if (!this.planned.has(task.id)) this.planned.set(task.id, this.planned.size);
      return 'planned';
    }
    const start = this.tasks.get(task.id)?.start ?? at;
    this.tasks.delete(task.id);
    const exported = this.traced?.exportedOf(task.id);
    if (task.error) {
      await attempt.addSpan({ ...attempt.span(task.name, start, 'error', { error: errorMessage(task.error), end: at }), ...exported });
      await attempt.publish({ type: 'node_end', node: task.name, status: 'error' });
      return 'error';
    }
    if ((task.interrupts?.length ?? 0) > 0) {
      for (const raised of task.interrupts as { id?: unknown; value?: unknown }[]) {
        if (typeof raised?.id === 'string') this.raised.push({ task: task.id, pending: { id: raised.id, value: raised.value, node: task.name } });
      }
      await attempt.addSpan({ ...attempt.span(task.name, start, 'interrupted', { end: at }), ...exported });
      return 'interrupted';
    }
    this.ended.push({ node: task.name, span: { ...attempt.span(task.name, start, 'ok', { end: at }), ...exported } });
    return 'ok';
  }

  /** The interrupts the run's tasks raised, in the order their tasks were planned (as a state snapshot lists them). */
  interrupts(): PendingInterrupt[] {
    const order = (task: string) => this.planned.get(task) ?? Number.MAX_SAFE_INTEGER;
    return this.raised
      .map((raised, i) => ({ ...raised, i }))
      .sort((a, b) => order(a.task) - order(b.task) || a.i - b.i)
      .map(({ pending }) => pending);
  }

  /** The node a writer or model event came from: the metadata's node, else the one task under way. */
  nodeOf(metadata?: Record<string, unknown>): string {
    const named = metadata?.langgraph_node;
    if (typeof named === 'string') return named;
    return this.tasks.size === 1 ? [...this.tasks.values()][0]!.node : '';
  }

  /** A step of the journal (checkpoint, spans, node events in one round trip), with the tasks that returned since the last. */
  step(patch: JsonObject, nodeId: string, starts?: readonly string[]): Promise<StepOutcome> {
    return this.attempt.step({ ended: this.ended.splice(0), patch, next: nodeId, ...(starts ? { starts } : {}) });
  }

  /** Records what the steps so far have not: tasks that returned, and tasks still open with `status`. */
  async flush(status: string, error?: string): Promise<void> {
    const { attempt } = this;
    for (const done of this.ended.splice(0)) {
      await attempt.addSpan(done.span);
      await attempt.publish({ type: 'node_end', node: done.node, status: 'ok' });
    }
    for (const [id, task] of this.tasks) {
      this.tasks.delete(id);
      await attempt.addSpan(attempt.span(task.node, task.start, status, { error }));
      if (status === 'error') await attempt.publish({ type: 'node_end', node: task.node, status: 'error' });
    }
  }
}
