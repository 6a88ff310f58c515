import { context, SpanKind, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { failSpan, tracer, tracingOptions } from './tracer.js';

/*
 * What the spans read of LangChain's callback arguments, by shape: LangChain is an optional
 * peer dependency that only src/langgraph/ imports, and a native node's model calls are traced
 * by this same handler.
 */

/** A serialized model or tool (`Serialized`): its class path, the class last. */
export interface LangChainSerialized {
  id?: string[];
}

/** A chat message (`BaseMessage`). */
export interface LangChainMessage {
  readonly type: string;
  readonly text: string;
  tool_calls?: { id?: string; name: string; args: unknown }[];
  response_metadata?: Record<string, unknown>;
  usage_metadata?: { input_tokens?: number; output_tokens?: number };
}

/** A model's answer (`LLMResult`). */
export interface LangChainResult {
  generations?: { text?: string; message?: LangChainMessage; generationInfo?: Record<string, unknown> }[][];
  llmOutput?: Record<string, unknown>;
}

/** What LangChain puts in the metadata of a model call (`getLsParams`). */
interface ModelMetadata {
  ls_provider?: unknown;
  ls_model_name?: unknown;
}

/**
 * A LangChain callback handler making the OpenTelemetry GenAI spans of model and tool calls: a
 * client span per model call (`chat <model>`, with `gen_ai.operation.name`,
 * `gen_ai.provider.name`/`gen_ai.system`, `gen_ai.request.model` and the token usage of its
 * answer) and a span per tool call (`execute_tool <name>`). Message content and tool arguments
 * are recorded only when `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`. Each span is
 * a child of the span of the LangChain run that called it; a chain is no span, its children sit
 * under its parent's, the outermost under `root` (the node's span, a run attempt's). Handlers
 * are awaited, so spans start and end when the work does.
 *
 * It meets LangChain's handler contract by shape (LangChain takes any object with a `name` in
 * `callbacks` as a handler and reads the flags below), so nothing here imports LangChain.
 */
export class LangChainSpans {
  readonly name: string = 'agentplane_opentelemetry';
  readonly awaitHandlers = true;
  readonly raiseError = false;
  readonly ignoreLLM = false;
  readonly ignoreChain = false;
  readonly ignoreAgent = false;
  readonly ignoreRetriever = false;
  readonly ignoreCustomEvent = false;
  /** The context each open LangChain run gives its children: its own span's, or its parent's. */
  protected readonly runs = new Map<string, { context: Context; span?: Span }>();

  constructor(
    protected readonly traces: Tracer,
    protected readonly root: Context,
  ) {}

  /** A handler under the active span (a native node's); undefined when tracing is off. */
  static underActiveSpan(): LangChainSpans | undefined {
    const traces = tracer();
    return traces ? new LangChainSpans(traces, context.active()) : undefined;
  }

  handleChainStart(_chain: LangChainSerialized, _inputs: unknown, runId: string, parentRunId?: string): void {
    this.runs.set(runId, { context: this.contextOf(parentRunId) });
  }

  handleChainEnd(_outputs: unknown, runId: string): void {
    this.end(runId);
  }

  handleChainError(_error: unknown, runId: string): void {
    this.end(runId);
  }

  handleChatModelStart(
    llm: LangChainSerialized,
    messages: LangChainMessage[][],
    runId: string,
    parentRunId?: string,
    extraParams?: Record<string, unknown>,
    _tags?: string[],
    metadata?: Record<string, unknown>,
  ): void {
    const span = this.startModelSpan('chat', llm, runId, parentRunId, extraParams, metadata);
    if (tracingOptions().captureMessageContent) span.setAttribute('gen_ai.input.messages', JSON.stringify(messages[0]?.map(messageOf) ?? []));
  }

  handleLLMStart(
    llm: LangChainSerialized,
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

  handleLLMEnd(output: LangChainResult, runId: string): void {
    const span = this.runs.get(runId)?.span;
    if (span) recordAnswer(span, output);
    this.end(runId);
  }

  handleLLMError(error: unknown, runId: string): void {
    this.failAndEnd(error, runId);
  }

  handleToolStart(
    tool: LangChainSerialized,
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

  handleToolEnd(output: unknown, runId: string): void {
    const span = this.runs.get(runId)?.span;
    if (span && tracingOptions().captureMessageContent) span.setAttribute('gen_ai.tool.call.result', typeof output === 'string' ? output : JSON.stringify(output));
    this.end(runId);
  }

  handleToolError(error: unknown, runId: string): void {
    this.failAndEnd(error, runId);
  }

  /** Starts the span of a LangChain run under its parent run's, and remembers it for the run's children. */
  protected start(runId: string, parentRunId: string | undefined, name: string, kind: SpanKind, attributes: Attributes): Span {
    const parent = this.contextOf(parentRunId);
    const span = this.traces.startSpan(name, { kind, attributes }, parent);
    this.runs.set(runId, { context: trace.setSpan(parent, span), span });
    return span;
  }

  /** Ends a run's span (if it has one) and forgets the run. */
  protected end(runId: string): void {
    this.runs.get(runId)?.span?.end();
    this.runs.delete(runId);
  }

  /** The context a run's children start in: its parent run's, `root` at the top. */
  protected contextOf(parentRunId: string | undefined): Context {
    return (parentRunId && this.runs.get(parentRunId)?.context) || this.root;
  }

  private failAndEnd(error: unknown, runId: string): void {
    const span = this.runs.get(runId)?.span;
    if (span) failSpan(span, error);
    this.end(runId);
  }

  private startModelSpan(
    operation: string,
    llm: LangChainSerialized,
    runId: string,
    parentRunId: string | undefined,
    extraParams: Record<string, unknown> | undefined,
    metadata: Record<string, unknown> | undefined,
  ): Span {
    const { ls_provider: provider, ls_model_name: named } = (metadata ?? {}) as ModelMetadata;
    const params = (extraParams?.invocation_params ?? {}) as Record<string, unknown>;
    const model = [named, params.model, params.model_name, params.modelName].find((value): value is string => typeof value === 'string' && value !== '');
    // LangChain names a provider in its metadata (`ls_provider`); else the model's class says it (ChatOpenAI → openai).
    const system = typeof provider === 'string' ? provider : (llm.id?.at(-1) ?? 'unknown').replace(/^Chat/, '').toLowerCase();
    const attributes: Attributes = { 'gen_ai.operation.name': operation, 'gen_ai.provider.name': system, 'gen_ai.system': system };
    if (model) attributes['gen_ai.request.model'] = model;
    for (const [param, attribute] of REQUEST_PARAMS) if (typeof params[param] === 'number') attributes[attribute] = params[param];
    return this.start(runId, parentRunId, model ? `${operation} ${model}` : operation, SpanKind.CLIENT, attributes);
  }
}

/** LangChain's invocation parameters that are GenAI request attributes. */
const REQUEST_PARAMS: readonly (readonly [string, string])[] = [
  ['temperature', 'gen_ai.request.temperature'],
  ['max_tokens', 'gen_ai.request.max_tokens'],
  ['top_p', 'gen_ai.request.top_p'],
];

const ROLES: Record<string, string> = { human: 'user', ai: 'assistant', system: 'system', tool: 'tool', generic: 'user' };

/** The answer's model, finish reason and token usage (and its content, when the operator opts in) on its span. */
function recordAnswer(span: Span, output: LangChainResult): void {
  const generation = output.generations?.[0]?.[0];
  const usage = usageOf(output, generation?.message);
  if (usage.input !== undefined) span.setAttribute('gen_ai.usage.input_tokens', usage.input);
  if (usage.output !== undefined) span.setAttribute('gen_ai.usage.output_tokens', usage.output);
  const responseModel = generation?.message?.response_metadata?.model_name ?? output.llmOutput?.model_name;
  if (typeof responseModel === 'string') span.setAttribute('gen_ai.response.model', responseModel);
  const finish = generation?.generationInfo?.finish_reason ?? generation?.message?.response_metadata?.finish_reason;
  if (typeof finish === 'string') span.setAttribute('gen_ai.response.finish_reasons', [finish]);
  if (tracingOptions().captureMessageContent) {
    const answer = generation?.message ? messageOf(generation.message) : { role: 'assistant', parts: [{ type: 'text', content: generation?.text ?? '' }] };
    span.setAttribute('gen_ai.output.messages', JSON.stringify([{ ...answer, ...(typeof finish === 'string' ? { finish_reason: finish } : {}) }]));
  }
}

/** A message as the GenAI conventions record it (`role`, `parts`). */
function messageOf(message: LangChainMessage): { role: string; parts: Record<string, unknown>[] } {
  const parts: Record<string, unknown>[] = [];
  if (message.text) parts.push({ type: 'text', content: message.text });
  for (const call of message.tool_calls ?? []) parts.push({ type: 'tool_call', id: call.id, name: call.name, arguments: call.args });
  return { role: ROLES[message.type] ?? message.type, parts };
}

/** Token usage: the answer's `usage_metadata`, else the provider's `llmOutput` (`tokenUsage`, OpenAI's `usage`). */
function usageOf(output: LangChainResult, message: LangChainMessage | undefined): { input?: number; output?: number } {
  const metadata = message?.usage_metadata;
  if (metadata) return { input: metadata.input_tokens, output: metadata.output_tokens };
  const llm = output.llmOutput ?? {};
  const usage = (llm.tokenUsage ?? llm.estimatedTokenUsage ?? llm.usage ?? {}) as Record<string, unknown>;
  const number = (...values: unknown[]) => values.find((value): value is number => typeof value === 'number');
  return { input: number(usage.promptTokens, usage.prompt_tokens, usage.input_tokens), output: number(usage.completionTokens, usage.completion_tokens, usage.output_tokens) };
}
