import { context, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { LangChainSpans, type LangChainSerialized } from '../observability/langchain-spans.js';
import { exportedIds, failSpan, tracer } from '../observability/tracer.js';

/** What LangGraph puts in the metadata of a task's runs (and of everything called inside it). */
interface TaskMetadata {
  langgraph_node?: unknown;
  langgraph_step?: unknown;
  /** `node:taskId`, a subgraph's tasks `outer:taskId|inner:taskId`. */
  langgraph_checkpoint_ns?: unknown;
}

/**
 * The OpenTelemetry spans of a LangGraph run's insides, from LangChain's callbacks: a span per
 * task (`task <node>`; a subgraph's tasks nest under the task that runs the subgraph), and the
 * GenAI spans of the model and tool calls inside them ({@link LangChainSpans}), each a child of
 * the span of the LangChain run that called it, the outermost of the run's attempt span
 * (`root`). One handler per attempt.
 */
export class TraceCallbacks extends LangChainSpans {
  /** The spans of the tasks by task id, for the stored spans of the same tasks. */
  private readonly tasks = new Map<string, Span>();

  constructor(
    traces: Tracer,
    root: Context,
    private readonly runId: string,
  ) {
    super(traces, root);
  }

  /** The handler of this attempt, under the active span (the attempt's); undefined when tracing is off. */
  static forAttempt(runId: string): TraceCallbacks | undefined {
    const traces = tracer();
    return traces ? new TraceCallbacks(traces, context.active(), runId) : undefined;
  }

  /** The ids of the exported span of a task, for its stored span (read once, when the task returned). */
  exportedOf(taskId: string): { trace_id: string; trace_span_id: string } | undefined {
    const span = this.tasks.get(taskId);
    this.tasks.delete(taskId);
    return exportedIds(span);
  }

  override handleChainStart(
    chain: LangChainSerialized,
    inputs: unknown,
    runId: string,
    parentRunId?: string,
    tags?: string[],
    metadata?: Record<string, unknown>,
    _runType?: string,
    runName?: string,
  ): void {
    const parent = this.contextOf(parentRunId);
    const { langgraph_node: node, langgraph_checkpoint_ns: namespace, langgraph_step: step } = (metadata ?? {}) as TaskMetadata;
    const taskId = typeof namespace === 'string' ? namespace.slice(namespace.lastIndexOf(':') + 1) : undefined;
    // A task's own run is the first with its namespace; what runs inside it carries the same metadata.
    // A hidden task (`__start__`, writing the input) is no span: LangGraph's tasks stream, and so the stored spans, leave it out.
    if (typeof node !== 'string' || runName !== node || !taskId || this.tasks.has(taskId) || parent.getValue(TASK_KEY) === taskId || tags?.includes(HIDDEN)) {
      super.handleChainStart(chain, inputs, runId, parentRunId);
      return;
    }
    const attributes: Attributes = { 'agentplane.run.id': this.runId, 'agentplane.node.id': node, 'agentplane.task.id': taskId };
    if (typeof step === 'number') attributes['agentplane.step'] = step;
    const span = this.traces.startSpan(`task ${node}`, { attributes }, parent);
    this.tasks.set(taskId, span);
    this.runs.set(runId, { context: trace.setSpan(parent, span).setValue(TASK_KEY, taskId), span });
  }

  override handleChainError(error: unknown, runId: string): void {
    const span = this.runs.get(runId)?.span;
    // interrupt() and a Command to the parent graph bubble up as errors: they are not failures.
    if (span && (error as { is_bubble_up?: unknown } | undefined)?.is_bubble_up === true) {
      span.addEvent((error as Error).name === 'ParentCommand' ? 'agentplane.command' : 'agentplane.interrupted');
    } else if (span) {
      failSpan(span, error);
    }
    super.handleChainError(error, runId);
  }
}

/** LangGraph's tag of its own tasks and runs (TAG_HIDDEN), which its tasks stream leaves out. */
const HIDDEN = 'langsmith:hidden';

/** Marks the context inside a task's span with the task id (what runs inside carries the task's metadata too). */
const TASK_KEY = Symbol.for('agentplane.langgraph.task');
