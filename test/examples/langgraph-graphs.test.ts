import { readFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ToolMessage, type AIMessage, type BaseMessage } from '@langchain/core/messages';
import { Command, CompiledStateGraph, MemorySaver } from '@langchain/langgraph';
import { graph as echo } from '../../examples/langgraph/echo.js';
import { graph as humanReview } from '../../examples/langgraph/human-review.js';
import { graph as mapReduce } from '../../examples/langgraph/map-reduce.js';
import { chatModel, FakeToolCallingChatModel, OpenAICompatibleChatModel } from '../../examples/langgraph/model.js';

const FOLDER = new URL('../../examples/langgraph/', import.meta.url);

/** A copy of an exported graph (compiled without a checkpointer) with LangGraph's own MemorySaver. */
function withSaver<G extends { builder: { compile(options: { checkpointer: MemorySaver }): unknown } }>(graph: G) {
  return graph.builder.compile({ checkpointer: new MemorySaver() }) as ReturnType<G['builder']['compile']>;
}

const thread = (id: string) => ({ configurable: { thread_id: id } });

/** A fresh copy of chat.ts, evaluated under the environment of the moment (it picks its model on load). */
async function loadChat(env: Record<string, string>) {
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  vi.resetModules();
  const { graph } = await import('../../examples/langgraph/chat.js');
  return withSaver(graph);
}

const turns = (messages: BaseMessage[]) => messages.map((message) => [message.type, message.text]);
const PARIS_CALL = { name: 'get_weather', args: { city: 'Paris' }, id: 'call_1', type: 'tool_call' };

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('langgraph.json', () => {
  it('names echo, chat and map-reduce, each a compiled graph exported where it says', async () => {
    const config = JSON.parse(await readFile(new URL('langgraph.json', FOLDER), 'utf8')) as { graphs: Record<string, string> };
    expect(Object.keys(config.graphs)).toEqual(['echo', 'chat', 'map-reduce']);
    vi.stubEnv('OPENAI_API_KEY', '');
    for (const spec of Object.values(config.graphs)) {
      const [file, exportName] = spec.split(':') as [string, string];
      const module = (await import(new URL(file, FOLDER).pathname)) as Record<string, unknown>;
      expect(module[exportName], spec).toBeInstanceOf(CompiledStateGraph);
      expect((module[exportName] as { checkpointer?: unknown }).checkpointer, spec).toBeUndefined();
    }
  });
});

describe('echo', () => {
  it('answers the input plus echoed: true, through receive and respond', async () => {
    const graph = withSaver(echo);
    expect(await graph.invoke({ message: 'hi' }, thread('echo-1'))).toEqual({ message: 'hi', echoed: true });
    const state = await graph.getState(thread('echo-1'));
    expect(state.values).toEqual({ message: 'hi', echoed: true });
    expect(state.next).toEqual([]);
    const nexts: string[][] = [];
    for await (const snapshot of graph.getStateHistory(thread('echo-1'))) nexts.unshift(snapshot.next);
    expect(nexts).toEqual([['__start__'], ['receive'], ['respond'], []]);
    expect(await withSaver(echo).invoke({ message: 'hi', fail: '' }, thread('echo-2'))).toEqual({ message: 'hi', fail: '', echoed: true });
  });

  it('fails in respond with the message of a non-empty "fail", the checkpoint left before respond', async () => {
    const graph = withSaver(echo);
    await expect(graph.invoke({ message: 'hi', fail: 'no answer today' }, thread('echo-3'))).rejects.toThrow('no answer today');
    const state = await graph.getState(thread('echo-3'));
    expect(state.next).toEqual(['respond']);
    expect(state.values).toEqual({ message: 'hi', fail: 'no answer today' });
  });
});

describe('human-review (served by bench/langgraph as lg-human-review)', () => {
  it('pauses at review with its question and the draft, publishes once approved', async () => {
    const graph = withSaver(humanReview);
    await graph.invoke({ topic: 'bench' }, thread('hr-1'));
    const paused = await graph.getState(thread('hr-1'));
    expect(paused.next).toEqual(['review']);
    expect(paused.tasks.flatMap((task) => task.interrupts.map((i) => i.value))).toEqual([{ question: 'Publish the draft?', draft: 'Draft: bench' }]);
    const done = await graph.invoke(new Command({ resume: { approved: true, comment: 'ok' } }), thread('hr-1'));
    expect(done).toEqual({ topic: 'bench', draft: 'Draft: bench', approved: true, comment: 'ok', outcome: 'published' });
  });

  it('discards on any other answer', async () => {
    const graph = withSaver(humanReview);
    await graph.invoke({ topic: 'bench' }, thread('hr-2'));
    const done = await graph.invoke(new Command({ resume: { approved: false } }), thread('hr-2'));
    expect(done).toMatchObject({ approved: false, comment: '', outcome: 'discarded' });
  });
});

describe('map-reduce', () => {
  it('runs one count_letters task per topic in one step, joins their results, then summarizes', async () => {
    const graph = withSaver(mapReduce);
    const tasks: { name: string; input: unknown; step: number }[] = [];
    for await (const event of await graph.stream({ topics: ['a', 'bb'] }, { ...thread('mr-1'), streamMode: 'debug' })) {
      if (event.type === 'task') tasks.push({ name: event.payload.name, input: event.payload.input, step: event.step });
    }
    const workers = tasks.filter((task) => task.name === 'count_letters');
    expect(workers.map((task) => task.input)).toEqual([{ topic: 'a' }, { topic: 'bb' }]);
    expect(new Set(workers.map((task) => task.step)).size).toBe(1);
    expect(tasks.filter((task) => task.name === 'summarize')).toHaveLength(1);
    expect((await graph.getState(thread('mr-1'))).values).toEqual({
      topics: ['a', 'bb'],
      results: ['a has 1 letter', 'bb has 2 letters'],
      summary: 'a has 1 letter; bb has 2 letters',
    });
  });

  it('goes straight to summarize without topics', async () => {
    const names: string[] = [];
    for await (const update of await mapReduce.stream({ topics: [] }, { streamMode: 'updates' })) names.push(...Object.keys(update));
    expect(names).toEqual(['summarize']);
    expect(await mapReduce.invoke({ topics: [] })).toEqual({ topics: [], results: [], summary: 'No topics.' });
  });
});

describe('chat with the fake model', () => {
  it('is the model without OPENAI_API_KEY, the OpenAI-compatible one with it', () => {
    expect(chatModel({})).toBeInstanceOf(FakeToolCallingChatModel);
    expect(chatModel({ OPENAI_API_KEY: '' })).toBeInstanceOf(FakeToolCallingChatModel);
    const model = chatModel({ OPENAI_API_KEY: 'sk-1' });
    expect(model).toBeInstanceOf(OpenAICompatibleChatModel);
    expect((model as OpenAICompatibleChatModel).model).toBe('gpt-4o-mini');
    expect(() => chatModel({ OPENAI_API_KEY: 'sk-1', OPENAI_BASE_URL: 'not a url' })).toThrow();
  });

  it('waits FAKE_MODEL_DELAY_MS before each chunk, stops waiting when the call is aborted, and refuses a delay that is no whole number', async () => {
    expect((chatModel({}) as FakeToolCallingChatModel).delayMs).toBe(0);
    const model = chatModel({ FAKE_MODEL_DELAY_MS: '60' }) as FakeToolCallingChatModel;
    expect(model.delayMs).toBe(60);
    const times: number[] = [];
    const started = performance.now();
    for await (const chunk of await model.stream([new ToolMessage({ tool_call_id: 'call_1', content: 'It is sunny.' })])) {
      times.push(performance.now() - started);
      expect(chunk.text).not.toBe('');
    }
    expect(times).toHaveLength(3);
    times.forEach((time, index) => expect(time).toBeGreaterThanOrEqual(60 * (index + 1) - 5));

    const slow = new FakeToolCallingChatModel({ delayMs: 60_000 });
    const aborted = slow.invoke([new ToolMessage({ tool_call_id: 'call_1', content: 'never' })], { signal: AbortSignal.timeout(50) });
    await expect(aborted).rejects.toThrow(/abort/i);

    for (const value of ['-1', '1.5', 'soon', '10000000']) expect(() => chatModel({ FAKE_MODEL_DELAY_MS: value }), value).toThrow('FAKE_MODEL_DELAY_MS');
  });

  it('asks before get_weather runs: the interrupt carries the question and the tool call', async () => {
    const graph = await loadChat({ OPENAI_API_KEY: '' });
    await graph.invoke({ messages: [{ role: 'user', content: 'Paris' }] }, thread('chat-1'));
    const question = { question: 'Run get_weather({"city":"Paris"})?', tool_call: PARIS_CALL };
    const state = await graph.getState(thread('chat-1'));
    expect(state.next).toEqual(['review']);
    expect(state.tasks[0]?.interrupts.map((entry) => entry.value)).toEqual([question]);
    expect(turns(state.values.messages)).toEqual([['human', 'Paris'], ['ai', '']]);
    expect((state.values.messages[1] as AIMessage).tool_calls).toEqual([PARIS_CALL]);
  });

  const SUNNY = 'It is always sunny in Paris.';
  const DECLINED = 'The user declined to run get_weather.';
  // LangGraph refuses Command({ resume: null }) itself (EmptyInputError): null is no answer here.
  it.each<[unknown, string]>([
    [{ approved: true }, SUNNY],
    [true, SUNNY],
    [{ approved: false }, DECLINED],
    [false, DECLINED],
    ['yes', DECLINED],
    [{ approve: true }, DECLINED],
    [0, DECLINED],
  ])('resumed with %j, answers the tool message %j (the tool ran only when approved)', async (resume, toolAnswer) => {
    const graph = await loadChat({ OPENAI_API_KEY: '' });
    await graph.invoke({ messages: [{ role: 'user', content: 'Paris' }] }, thread('chat-2'));
    await graph.invoke(new Command({ resume }), thread('chat-2'));
    const state = await graph.getState(thread('chat-2'));
    expect(state.next).toEqual([]);
    expect(turns(state.values.messages)).toEqual([
      ['human', 'Paris'],
      ['ai', ''],
      ['tool', toolAnswer],
      ['ai', toolAnswer],
    ]);
  });

  it('streams the answer token by token in the messages stream mode', async () => {
    const graph = await loadChat({ OPENAI_API_KEY: '' });
    await graph.invoke({ messages: [{ role: 'user', content: 'Paris' }] }, thread('chat-4'));
    const tokens: string[] = [];
    for await (const [message, metadata] of await graph.stream(new Command({ resume: { approved: true } }), { ...thread('chat-4'), streamMode: 'messages' })) {
      if (metadata.langgraph_node === 'agent') tokens.push(message.text);
    }
    expect(tokens).toEqual(['It ', 'is ', 'always ', 'sunny ', 'in ', 'Paris.']);
  });
});

interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: Record<string, any>;
}

/** An OpenAI-compatible server on 127.0.0.1: POST /v1/chat/completions answered by the next of `replies`. */
async function startFakeOpenAI(replies: ((res: ServerResponse) => void)[]) {
  const requests: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      const reply = req.method === 'POST' && req.url === '/v1/chat/completions' ? replies.shift() : undefined;
      if (reply) reply(res);
      else res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"error":{"message":"not found"}}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A streamed completion of these deltas, as OpenAI sends it. */
const streamed = (deltas: Record<string, unknown>[]) => (res: ServerResponse) => {
  res.writeHead(200, { 'Content-Type': 'text/event-stream' });
  for (const delta of deltas) res.write(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [{ index: 0, delta }] })}\n\n`);
  res.end('data: [DONE]\n\n');
};

describe('chat on an OpenAI-compatible API (OPENAI_API_KEY set)', () => {
  let fake: Awaited<ReturnType<typeof startFakeOpenAI>>;
  const replies: ((res: ServerResponse) => void)[] = [];

  beforeAll(async () => {
    fake = await startFakeOpenAI(replies);
  });
  afterAll(async () => {
    await fake.close();
  });

  it('sends the conversation and the tool, turns streamed tool call pieces into the interrupt, and sends the result back', async () => {
    replies.push(
      streamed([
        { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
        { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
        { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
      ]),
      streamed([{ role: 'assistant', content: 'Sunny ' }, { content: 'in Paris.' }]),
    );
    const graph = await loadChat({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${fake.baseUrl}/`, OPENAI_MODEL: 'test-model' });
    await graph.invoke({ messages: [{ role: 'user', content: 'Weather in Paris?' }] }, thread('openai-1'));
    const paused = await graph.getState(thread('openai-1'));
    expect(paused.tasks[0]?.interrupts.map((entry) => entry.value)).toEqual([{
      question: 'Run get_weather({"city":"Paris"})?',
      tool_call: { name: 'get_weather', args: { city: 'Paris' }, id: 'call_abc', type: 'tool_call' },
    }]);
    const [asked] = fake.requests;
    expect(asked?.headers.authorization).toBe('Bearer sk-test');
    expect(asked?.body).toMatchObject({ model: 'test-model', stream: true, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    expect(asked?.body.tools).toEqual([
      {
        type: 'function',
        function: expect.objectContaining({
          name: 'get_weather',
          description: 'The current weather in a city.',
          parameters: expect.objectContaining({ type: 'object', properties: { city: expect.objectContaining({ type: 'string' }) }, required: ['city'] }),
        }),
      },
    ]);

    await graph.invoke(new Command({ resume: { approved: true } }), thread('openai-1'));
    expect(fake.requests[1]?.body.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', content: 'It is always sunny in Paris.', tool_call_id: 'call_abc' },
    ]);
    const state = await graph.getState(thread('openai-1'));
    expect(turns(state.values.messages).at(-1)).toEqual(['ai', 'Sunny in Paris.']);
    expect(fake.requests).toHaveLength(2);
  });

  it('fails with the model, the URL and the server status when the API refuses', async () => {
    replies.push((res) => res.writeHead(401, { 'Content-Type': 'application/json' }).end('{"error":{"message":"bad key"}}'));
    const graph = await loadChat({ OPENAI_API_KEY: 'sk-wrong', OPENAI_BASE_URL: fake.baseUrl, OPENAI_MODEL: 'test-model' });
    await expect(graph.invoke({ messages: [{ role: 'user', content: 'Paris' }] }, thread('openai-2'))).rejects.toThrow(
      `The chat completion of model "test-model" at ${fake.baseUrl}/chat/completions failed: 401 {"error":{"message":"bad key"}}`,
    );
  });
});
