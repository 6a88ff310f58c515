import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { defineAgent, type Agent } from '../../src/runtime/agent.js';
import type { JsonObject } from '../../src/domain/types.js';

/** Where the model is and how to call it; any OpenAI-compatible API (OpenAI, Ollama, vLLM…). */
export interface ChatAgentOptions {
  /** Base URL of the API, up to and with `/v1` (`http://localhost:11434/v1` for Ollama). */
  baseURL: string;
  /** Sent as `Authorization: Bearer …`; servers that ignore it (Ollama) take any non-empty value. */
  apiKey: string;
  /** The `model` of every request (`llama3.2`, `gpt-4o-mini`…). */
  model: string;
  /** A system message put before the conversation on every request; not stored in the state. */
  system?: string;
  /** Retries of a request that fails with a connection error, 408, 409, 429 or 5xx. @defaultValue 2 */
  maxRetries?: number;
  /** Longest wait for the model's answer to start, per try. @defaultValue 600000 */
  timeoutMs?: number;
  /** The agent's id. @defaultValue "llm-chat" */
  id?: string;
}

/** One turn of the conversation as the state keeps it in `messages`. */
interface Turn extends JsonObject {
  role: 'user' | 'assistant';
  content: string;
}

function isTurn(value: unknown): value is Turn {
  const turn = value as Partial<Turn> | null;
  return typeof turn === 'object' && turn !== null && (turn.role === 'user' || turn.role === 'assistant') && typeof turn.content === 'string';
}

/** The conversation so far: `messages` of the state, checked (a patched session may hold anything). */
function historyOf(state: JsonObject): Turn[] {
  const { messages } = state;
  if (messages === undefined) return [];
  if (!Array.isArray(messages) || !messages.every(isTurn)) {
    throw new TypeError('"messages" must be an array of { role: "user" | "assistant", content: string }.');
  }
  return messages;
}

/** An error's message, with its innermost cause's when that says more ("Connection error." → ECONNREFUSED). */
function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  let root = error;
  while (root instanceof Error && root.cause !== undefined) root = root.cause;
  return root !== error && root instanceof Error && root.message ? `${message} (${root.message})` : message;
}

/**
 * An agent of one node, `chat`: sends the conversation (`messages` of the state, then the
 * input `prompt` as the user's turn) to the model with `stream: true` and publishes each piece
 * of the answer as it arrives as a `custom` event `token` (`data: { index, text }`). The call
 * carries the run's `ctx.signal`: a cancelled run closes the request. The final state adds
 * `answer`, `finish_reason`, `usage` (when the server reports it) and `messages` with both
 * turns appended, so the next run on the session continues the conversation.
 */
export function chatAgent(options: ChatAgentOptions): Agent {
  const { model, system, baseURL } = options;
  const client = new OpenAI({
    baseURL,
    apiKey: options.apiKey,
    maxRetries: options.maxRetries ?? 2,
    timeout: options.timeoutMs ?? 600_000,
  });

  return defineAgent({
    id: options.id ?? 'llm-chat',
    description: `Answers the input "prompt" with the model ${model}, streaming the answer as custom "token" events.`,
    entry: 'chat',
    nodes: {
      chat: async (state, ctx) => {
        const { prompt } = state;
        if (typeof prompt !== 'string' || prompt.trim() === '') throw new TypeError('The input needs "prompt": a non-empty string.');
        const history = historyOf(state);
        const question: Turn = { role: 'user', content: prompt };
        const messages: ChatCompletionMessageParam[] = [...(system ? [{ role: 'system' as const, content: system }] : []), ...history, question];
        const pieces: string[] = [];
        let finishReason: string | null = null;
        let usage: JsonObject | undefined;
        try {
          const stream = await client.chat.completions.create(
            { model, messages, stream: true, stream_options: { include_usage: true } },
            { signal: ctx.signal },
          );
          for await (const chunk of stream) {
            // With include_usage the last chunk has no choices, only the usage.
            if (chunk.usage) usage = { ...chunk.usage };
            const choice = chunk.choices[0];
            if (!choice) continue;
            finishReason = choice.finish_reason ?? finishReason;
            const text = choice.delta?.content;
            if (!text) continue;
            await ctx.emit('token', { index: pieces.length, text });
            pieces.push(text);
          }
        } catch (error) {
          // A cancel is not the model's failure: the executor ends the run as cancelled.
          if (ctx.signal.aborted) throw error;
          throw new Error(`The chat completion of model "${model}" at ${baseURL} failed: ${reasonOf(error)}`, { cause: error });
        }
        const answer = pieces.join('');
        return {
          answer,
          finish_reason: finishReason,
          ...(usage ? { usage } : {}),
          messages: [...history, question, { role: 'assistant', content: answer }],
        };
      },
    },
    edges: { chat: '__end__' },
  });
}
