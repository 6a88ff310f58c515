import { setTimeout as sleep } from 'node:timers/promises';
import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import { BaseChatModel, type BaseChatModelCallOptions, type BindToolsInput } from '@langchain/core/language_models/chat_models';
import type { ToolDefinition } from '@langchain/core/language_models/base';
import { AIMessageChunk, type AIMessage, type BaseMessage, type ToolMessage } from '@langchain/core/messages';
import { ChatGenerationChunk, type ChatResult } from '@langchain/core/outputs';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';

/** Call options of both models: the tools `bindTools` bound, as OpenAI function definitions. */
export interface ToolCallOptions extends BaseChatModelCallOptions {
  tools?: ToolDefinition[];
}

/**
 * A chat model that streams: subclasses write `_streamResponseChunks`; `invoke` without a
 * streaming callback gets the chunks joined, so both paths answer the same message.
 */
export abstract class StreamingChatModel extends BaseChatModel<ToolCallOptions> {
  override bindTools(tools: BindToolsInput[], kwargs?: Partial<ToolCallOptions>) {
    return this.withConfig({ ...kwargs, tools: tools.map((tool) => convertToOpenAITool(tool)) });
  }

  override async _generate(messages: BaseMessage[], options: this['ParsedCallOptions'], runManager?: CallbackManagerForLLMRun): Promise<ChatResult> {
    let joined: ChatGenerationChunk | undefined;
    for await (const chunk of this._streamResponseChunks(messages, options, runManager)) joined = joined ? joined.concat(chunk) : chunk;
    if (!joined) throw new Error(`The model ${this._llmType()} answered nothing.`);
    return { generations: [joined] };
  }
}

/** A piece of text as a chunk, announced to the callbacks (LangGraph's `messages` stream mode). */
async function textChunk(text: string, runManager?: CallbackManagerForLLMRun): Promise<ChatGenerationChunk> {
  const chunk = new ChatGenerationChunk({ text, message: new AIMessageChunk({ content: text }) });
  await runManager?.handleLLMNewToken(text, undefined, undefined, undefined, undefined, { chunk });
  return chunk;
}

/** How the fake model answers. */
export interface FakeModelOptions {
  /**
   * Milliseconds waited before each chunk (the tool call, each word), so a demo or a test sees
   * the answer come in piece by piece and has time to act mid-run. @defaultValue 0
   */
  delayMs?: number;
}

/**
 * A deterministic model for running the examples without an API key. To a user's message it
 * answers with a call of the first bound tool, its first parameter set to the message's text
 * (`get_weather({"city":"Paris"})`); to a tool's result it answers that result, word by word.
 */
export class FakeToolCallingChatModel extends StreamingChatModel {
  readonly delayMs: number;

  constructor(options: FakeModelOptions = {}) {
    super({});
    this.delayMs = options.delayMs ?? 0;
  }

  /** Waits the delay before a chunk; a cancelled run stops waiting at once. */
  private async pause(signal: AbortSignal | undefined): Promise<void> {
    if (this.delayMs > 0) await sleep(this.delayMs, undefined, { signal });
  }

  override _llmType(): string {
    return 'fake-tool-calling';
  }

  override async *_streamResponseChunks(messages: BaseMessage[], options: this['ParsedCallOptions'], runManager?: CallbackManagerForLLMRun) {
    const last = messages.at(-1);
    const tool = options.tools?.[0]?.function;
    if (last?.type === 'human' && tool) {
      const [parameter] = Object.keys((tool.parameters as { properties?: object }).properties ?? {});
      const args = JSON.stringify(parameter ? { [parameter]: last.text } : {});
      const call = { type: 'tool_call_chunk' as const, index: 0, id: `call_${messages.length}`, name: tool.name, args };
      await this.pause(options.signal);
      yield new ChatGenerationChunk({ text: '', message: new AIMessageChunk({ content: '', tool_call_chunks: [call] }) });
      return;
    }
    const answer = last?.type === 'tool' ? last.text : `You said: ${last?.text ?? ''}`;
    for (const word of answer.split(/(?<= )/)) {
      await this.pause(options.signal);
      yield await textChunk(word, runManager);
    }
  }
}

/** Where an OpenAI-compatible chat completions API is. */
export interface OpenAICompatibleOptions {
  /** Sent as `Authorization: Bearer …`. */
  apiKey: string;
  /** The API up to and with `/v1`. @defaultValue "https://api.openai.com/v1" */
  baseUrl?: string;
  /** @defaultValue "gpt-4o-mini" */
  model?: string;
  /** Longest wait for a whole answer. @defaultValue 120000 */
  timeoutMs?: number;
}

/** One chunk of a streamed chat completion, the parts read here. */
interface CompletionChunk {
  choices?: { delta?: { content?: string | null; tool_calls?: { index: number; id?: string; function?: { name?: string; arguments?: string } }[] } }[];
}

/** A LangChain message as the chat completions API takes it. */
function toOpenAIMessage(message: BaseMessage): Record<string, unknown> {
  switch (message.type) {
    case 'system':
      return { role: 'system', content: message.text };
    case 'human':
      return { role: 'user', content: message.text };
    case 'tool':
      return { role: 'tool', content: message.text, tool_call_id: (message as ToolMessage).tool_call_id };
    case 'ai': {
      const calls = (message as AIMessage).tool_calls ?? [];
      const tool_calls = calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } }));
      return { role: 'assistant', content: message.text || null, ...(tool_calls.length ? { tool_calls } : {}) };
    }
    default:
      throw new TypeError(`A ${message.type} message has no chat completions role.`);
  }
}

/** The JSON of each `data:` line of a server-sent event stream, until `[DONE]`. */
async function* dataLines(body: ReadableStream<Uint8Array>): AsyncGenerator<unknown> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      buffered += decoder.decode(read.value, { stream: true });
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (data === '[DONE]') return;
        yield JSON.parse(data);
      }
    }
  } finally {
    // Stopped early ([DONE], an aborted run): let go of the connection.
    await reader.cancel();
  }
}

/**
 * A chat model on any OpenAI-compatible chat completions API (OpenAI, Ollama, vLLM…), called
 * with `fetch` and `stream: true`: text is announced token by token, tool calls are passed on
 * as LangChain tool call chunks.
 */
export class OpenAICompatibleChatModel extends StreamingChatModel {
  readonly model: string;
  private readonly url: string;

  constructor(private readonly options: OpenAICompatibleOptions) {
    super({});
    this.model = options.model ?? 'gpt-4o-mini';
    this.url = `${new URL(options.baseUrl ?? 'https://api.openai.com/v1').href.replace(/\/$/, '')}/chat/completions`;
  }

  override _llmType(): string {
    return 'openai-compatible';
  }

  override async *_streamResponseChunks(messages: BaseMessage[], options: this['ParsedCallOptions'], runManager?: CallbackManagerForLLMRun) {
    const tools = options.tools?.length ? { tools: options.tools } : {};
    const signals = [AbortSignal.timeout(this.options.timeoutMs ?? 120_000), ...(options.signal ? [options.signal] : [])];
    let response: Response;
    try {
      response = await fetch(this.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${this.options.apiKey}` },
        body: JSON.stringify({ model: this.model, messages: messages.map(toOpenAIMessage), stream: true, ...tools }),
        signal: AbortSignal.any(signals),
      });
    } catch (error) {
      throw new Error(`The chat completion of model "${this.model}" at ${this.url} failed: ${(error as Error).message}`, { cause: error });
    }
    if (!response.ok || !response.body) {
      const detail = (await response.text()).slice(0, 500);
      throw new Error(`The chat completion of model "${this.model}" at ${this.url} failed: ${response.status} ${detail}`);
    }
    for await (const data of dataLines(response.body)) {
      const delta = (data as CompletionChunk).choices?.[0]?.delta;
      if (delta?.content) yield await textChunk(delta.content, runManager);
      if (delta?.tool_calls?.length) {
        const calls = delta.tool_calls.map((call) => ({ type: 'tool_call_chunk' as const, index: call.index, id: call.id, name: call.function?.name, args: call.function?.arguments }));
        yield new ChatGenerationChunk({ text: '', message: new AIMessageChunk({ content: '', tool_call_chunks: calls }) });
      }
    }
  }
}

/** `FAKE_MODEL_DELAY_MS`: a whole number of milliseconds, 0 when unset; anything else stops the load. */
function fakeModelDelayMs(value: string | undefined): number {
  if (value === undefined || value === '') return 0;
  if (!/^\d{1,7}$/.test(value)) throw new Error(`FAKE_MODEL_DELAY_MS must be a whole number of milliseconds (0 to 9999999); got "${value}".`);
  return Number(value);
}

/**
 * The model of the examples: an OpenAI-compatible API when `OPENAI_API_KEY` is set
 * (`OPENAI_BASE_URL`, `OPENAI_MODEL`), otherwise the deterministic fake, waiting
 * `FAKE_MODEL_DELAY_MS` before each chunk.
 */
export function chatModel(env: NodeJS.ProcessEnv = process.env): StreamingChatModel {
  const apiKey = env.OPENAI_API_KEY;
  if (!apiKey) return new FakeToolCallingChatModel({ delayMs: fakeModelDelayMs(env.FAKE_MODEL_DELAY_MS) });
  return new OpenAICompatibleChatModel({ apiKey, baseUrl: env.OPENAI_BASE_URL || undefined, model: env.OPENAI_MODEL || undefined });
}
