import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';

/** An OpenAI-compatible chat completions server: every answer is "42", with its token usage. */
export async function startFakeOpenAI(): Promise<{ baseURL: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 0,
          model: 'gpt-test-2026-01-01',
          choices: [{ index: 0, message: { role: 'assistant', content: '42' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A chat model on the `openai` client reporting as ChatOpenAI does (`ls_provider`, `usage_metadata`, `tokenUsage`). */
export class ChatOnFakeServer extends BaseChatModel {
  constructor(
    private readonly client: OpenAI,
    readonly model: string,
  ) {
    super({});
  }
  override _llmType(): string {
    return 'openai';
  }
  override getLsParams(options: this['ParsedCallOptions']) {
    return { ...super.getLsParams(options), ls_provider: 'openai', ls_model_name: this.model };
  }
  override async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const completion = await this.client.chat.completions.create({
      model: this.model,
      messages: messages.map((message) => ({ role: message.type === 'ai' ? 'assistant' : 'user', content: message.text })),
    });
    const text = completion.choices[0]?.message.content ?? '';
    const usage = completion.usage!;
    const message = new AIMessage({
      content: text,
      usage_metadata: { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens, total_tokens: usage.total_tokens },
      response_metadata: { model_name: completion.model, finish_reason: completion.choices[0]?.finish_reason },
    });
    return { generations: [{ text, message }], llmOutput: { tokenUsage: { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens } } };
  }
}

/** The GenAI attributes of the span of a call of {@link fakeChatModel} (model `gpt-test`) answered by {@link startFakeOpenAI}. */
export const FAKE_CHAT_ATTRIBUTES = Object.freeze({
  'gen_ai.operation.name': 'chat',
  'gen_ai.provider.name': 'openai',
  'gen_ai.system': 'openai',
  'gen_ai.request.model': 'gpt-test',
  'gen_ai.response.model': 'gpt-test-2026-01-01',
  'gen_ai.usage.input_tokens': 11,
  'gen_ai.usage.output_tokens': 3,
});

/** {@link ChatOnFakeServer} on the fake server at `baseURL`, asking for `model`. */
export function fakeChatModel(baseURL: string, model = 'gpt-test'): ChatOnFakeServer {
  return new ChatOnFakeServer(new OpenAI({ apiKey: 'sk-test', baseURL }), model);
}
