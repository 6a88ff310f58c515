import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import type { Serialized } from '@langchain/core/load/serializable';
import type { BaseMessage } from '@langchain/core/messages';
import type { LLMResult } from '@langchain/core/outputs';
import { context, SpanKind, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { exportedIds, failSpan, tracer, tracingOptions } from '../observability/tracer.js';

/** What LangGraph puts in the metadata of a task's runs (and of everything called inside it). */
interface TaskMetadata {
  langgraph_node?: unknown;
  langgraph_step?: unknown;
  /** `node:taskId`, a subgraph's tasks `outer:taskId|inner:taskId`. */
  langgraph_checkpoint_ns?: unknown;
  ls_provider?: unknown;
  ls_model_name?: unknown;
}

/**
 * The OpenTelemetry spans of a LangGraph run's insides, from LangChain's callbacks: a span per
 * task (`task <node>`; a subgraph's tasks nest under the task that runs the subgraph), a GenAI
 * client span per model call (`chat <model>`, with `gen_ai.operation.name`,
 * `gen_ai.provider.name`/`gen_ai.system`, `gen_ai.request.model` and the token usage of its
 * answer) and a span per tool call (`execute_tool <name>`). Message content and tool arguments
 * are recorded only when `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`. Each span is
 * a child of the span of the LangChain run that called it, the outermost of the run's attempt
 * span (`root`). One handler per attempt; handlers are awaited, so spans start and end when
 * the work does.
 */
export class TraceCallbacks extends BaseCallbackHandler {
  name = 'agentplane_opentelemetry';
  override awaitHandlers = true;
  /** The context each open LangChain run gives its children: its own span's, or its parent's. */
  private readonly runs = new Map<string, { context: Context; span?: Span }>();
  /** The spans of the tasks by task id, for the stored spans of the same tasks. */
  private readonly tasks = new Map<string, Span>();

  constructor(
    private readonly traces: Tracer,
    private readonly root: Context,
    private readonly runId: string,
  ) {
    super();
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
    _chain: Serialized,
    _inputs: unknown,
    runId: string,
    parentRunId?: string,
    _tags?: string[],
    metadata?: Record<string, unknown>,
    _runType?: string,
    runName?: string,
  ): void {
    const parent = this.contextOf(parentRunId);
    const { langgraph_node: node, langgraph_checkpoint_ns: namespace, langgraph_step: step } = (metadata ?? {}) as TaskMetadata;
    const taskId = typeof namespace === 'string' ? namespace.slice(namespace.lastIndexOf(':') + 1) : undefined;
    // A task's own run is the first with its namespace; what runs inside it carries the same metadata.
    if (typeof node !== 'string' || runName !== node || !taskId || this.tasks.has(taskId) || this.isTaskContext(parent, taskId)) {
      this.runs.set(runId, { context: parent });
      return;
    }
    const attributes: Attributes = { 'agentplane.run.id': this.runId, 'agentplane.node.id': node, 'agentplane.task.id': taskId };
    if (typeof step === 'number') attributes['agentplane.step'] = step;
    const span = this.traces.startSpan(`task ${node}`, { attributes }, parent);
    this.tasks.set(taskId, span);
    this.runs.set(runId, { context: trace.setSpan(parent, span).setValue(TASK_KEY, taskId), span });
  }

  override handleChainEnd(_outputs: unknown, runId: string): void {
    this.end(runId);
  }

  override handleChainError(error: unknown, runId: string): void {
    const span = this.runs.get(runId)?.span;
    // interrupt() and a Command to the parent graph bubble up as errors: they are not failures.
    if (span && (error as { is_bubble_up?: unknown } | undefined)?.is_bubble_up === true) {
      span.addEvent((error as Error).name === 'ParentCommand' ? 'agentplane.command' : 'agentplane.interrupted');
    } else if (span) {
      failSpan(span, error);
    }
    this.end(runId);
  }

  override handleChatModelStart(
    llm: Serialized,
    messages: BaseMessage[][],
    runId: string,
    parentRunId?: string,
    extraParams?: Record<string, unknown>,
    _tags?: string[],
    metadata?: Record<string, unknown>,
  ): void {
    const span = this.startModelSpan('chat', llm, runId, parentRunId, extraParams, metadata);
    if (tracingOptions().captureMessageContent) span.setAttribute('gen_ai.input.messages', JSON.stringify(messages[0]?.map(messageOf) ?? []));
  }

  override handleLLMStart(
    llm: Serialized,
    prompts: string[],
    runId: string,
    parentRunId?: string,
    extraParams?: Record<string, unknown>,
    _tags?: string[],
    metadata?: Record<string, unknown>,
  ): void {
    const span = this.startModelSpan('text_completion', llm, runId, parentRunId, extraParams, metadata);
    if (tracingOptions().captureMessageContent) span.setAttribute('gen_ai.input.messages', JSON.stringify(prompts.map((text) => ({ role: 'user', parts: [{ type: 'text', content: text }] }))));
  }

  override handleLLMEnd(output: LLMResult, runId: string): void {
    const span = this.runs.get(runId)?.span;
    if (span) {
      const generation = output.generations?.[0]?.[0] as { text?: string; message?: BaseMessage; generationInfo?: Record<string, unknown> } | undefined;
      const usage = usageOf(output, generation?.message);
      if (usage.input !== undefined) span.setAttribute('gen_ai.usage.input_tokens', usage.input);
      if (usage.output !== undefined) span.setAttribute('gen_ai.usage.output_tokens', usage.output);
      const responseModel = (generation?.message?.response_metadata as Record<string, unknown> | undefined)?.model_name ?? output.llmOutput?.model_name;
      if (typeof responseModel === 'string') span.setAttribute('gen_ai.response.model', responseModel);
      const finish = generation?.generationInfo?.finish_reason ?? (generation?.message?.response_metadata as Record<string, unknown> | undefined)?.finish_reason;
      if (typeof finish === 'string') span.setAttribute('gen_ai.response.finish_reasons', [finish]);
      if (tracingOptions().captureMessageContent) {
        const answer = generation?.message ? messageOf(generation.message) : { role: 'assistant', parts: [{ type: 'text', content: generation?.text ?? '' }] };
        span.setAttribute('gen_ai.output.messages', JSON.stringify([{ ...answer, ...(typeof finish === 'string' ? { finish_reason: finish } : {}) }]));
      }
    }
    this.end(runId);
  }

  override handleLLMError(error: unknown, runId: string): void {
    this.failAndEnd(error, runId);
  }

  override handleToolStart(
    tool: Serialized,
    input: string,
    runId: string,
    parentRunId?: string,
    _tags?: string[],
    _metadata?: Record<string, unknown>,
    runName?: string,
    toolCallId?: string,
  ): void {
    const name = runName ?? tool.id?.at(-1) ?? 'tool';
    const attributes: Attributes = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name };
    if (toolCallId) attributes['gen_ai.tool.call.id'] = toolCallId;
    if (tracingOptions().captureMessageContent) attributes['gen_ai.tool.call.arguments'] = input;
    this.start(runId, parentRunId, `execute_tool ${name}`, SpanKind.INTERNAL, attributes);
  }

  override handleToolEnd(output: unknown, runId: string): void {
    const span = this.runs.get(runId)?.span;
    if (span && tracingOptions().captureMessageContent) span.setAttribute('gen_ai.tool.call.result', typeof output === 'string' ? output : JSON.stringify(output));
    this.end(runId);
  }

  override handleToolError(error: unknown, runId: string): void {
    this.failAndEnd(error, runId);
  }

  private startModelSpan(
    operation: string,
    llm: Serialized,
    runId: string,
    parentRunId: string | undefined,
    extraParams: Record<string, unknown> | undefined,
    metadata: Record<string, unknown> | undefined,
  ): Span {
    const { ls_provider: provider, ls_model_name: named } = (metadata ?? {}) as TaskMetadata;
    const params = (extraParams?.invocation_params ?? {}) as Record<string, unknown>;
    const model = [named, params.model, params.model_name, params.modelName].find((value): value is string => typeof value === 'string' && value !== '');
    // LangChain names a provider in its metadata (`ls_provider`); else the model's class says it (ChatOpenAI → openai).
    const system = typeof provider === 'string' ? provider : (llm.id?.at(-1) ?? 'unknown').replace(/^Chat/, '').toLowerCase();
    const attributes: Attributes = { 'gen_ai.operation.name': operation, 'gen_ai.provider.name': system, 'gen_ai.system': system };
    if (model) attributes['gen_ai.request.model'] = model;
    for (const [param, attribute] of REQUEST_PARAMS) if (typeof params[param] === 'number') attributes[attribute] = params[param];
    return this.start(runId, parentRunId, model ? `${operation} ${model}` : operation, SpanKind.CLIENT, attributes);
  }

  private start(runId: string, parentRunId: string | undefined, name: string, kind: SpanKind, attributes: Attributes): Span {
    const parent = this.contextOf(parentRunId);
    const span = this.traces.startSpan(name, { kind, attributes }, parent);
    this.runs.set(runId, { context: trace.setSpan(parent, span), span });
    return span;
  }

  private failAndEnd(error: unknown, runId: string): void {
    const span = this.runs.get(runId)?.span;
    if (span) failSpan(span, error);
    this.end(runId);
  }

  private end(runId: string): void {
    this.runs.get(runId)?.span?.end();
    this.runs.delete(runId);
  }

  /** The context a run's children start in: its parent run's, the attempt's at the top. */
  private contextOf(parentRunId: string | undefined): Context {
    return (parentRunId && this.runs.get(parentRunId)?.context) || this.root;
  }

  private isTaskContext(parent: Context, taskId: string): boolean {
    return parent.getValue(TASK_KEY) === taskId;
  }
}

/** Marks the context inside a task's span with the task id (what runs inside carries the task's metadata too). */
const TASK_KEY = Symbol.for('agentplane.langgraph.task');

/** LangChain's invocation parameters that are GenAI request attributes. */
const REQUEST_PARAMS: readonly (readonly [string, string])[] = [
  ['temperature', 'gen_ai.request.temperature'],
  ['max_tokens', 'gen_ai.request.max_tokens'],
  ['top_p', 'gen_ai.request.top_p'],
];

const ROLES: Record<string, string> = { human: 'user', ai: 'assistant', system: 'system', tool: 'tool', generic: 'user' };

/** A message as the GenAI conventions record it (`role`, `parts`). */
function messageOf(message: BaseMessage): { role: string; parts: Record<string, unknown>[] } {
  const parts: Record<string, unknown>[] = [];
  if (message.text) parts.push({ type: 'text', content: message.text });
  for (const call of (message as { tool_calls?: { id?: string; name: string; args: unknown }[] }).tool_calls ?? []) {
    parts.push({ type: 'tool_call', id: call.id, name: call.name, arguments: call.args });
  }
  return { role: ROLES[message.type] ?? message.type, parts };
}

/** Token usage: the answer's `usage_metadata`, else the provider's `llmOutput` (`tokenUsage`, OpenAI's `usage`). */
function usageOf(output: LLMResult, message: BaseMessage | undefined): { input?: number; output?: number } {
  const metadata = (message as { usage_metadata?: { input_tokens?: number; output_tokens?: number } } | undefined)?.usage_metadata;
  if (metadata) return { input: metadata.input_tokens, output: metadata.output_tokens };
  const llm = output.llmOutput ?? {};
  const usage = (llm.tokenUsage ?? llm.estimatedTokenUsage ?? llm.usage ?? {}) as Record<string, unknown>;
  const number = (...values: unknown[]) => values.find((value): value is number => typeof value === 'number');
  return { input: number(usage.promptTokens, usage.prompt_tokens, usage.input_tokens), output: number(usage.completionTokens, usage.completion_tokens, usage.output_tokens) };
}
