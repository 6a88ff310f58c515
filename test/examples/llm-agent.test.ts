import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentRegistry, loadAgents } from '../../src/runtime/registry.js';
import { chatAgent } from '../../examples/llm/chat-agent.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { waitFor } from '../support/wait.js';
import { eventsOf } from '../support/sse.js';
import { cancelRun, openRunStream, postWait, within } from '../runs/wait.js';

/** The example module exactly as AGENTS_MODULE names it. */
const MODULE = 'examples/llm/agents.ts';
const MODEL = 'test-model';
const KEY = 'sk-test-key';
const SYSTEM = 'You are terse.';
const USAGE = { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 };

interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: Record<string, any>;
  /** True once the connection closed before the answer was complete (the client gave up). */
  abandoned: boolean;
}

/**
 * A stand-in for an OpenAI-compatible server on 127.0.0.1: POST /v1/chat/completions answered by
 * `reply` (swapped per test), every request recorded.
 */
interface FakeLlm {
  baseURL: string;
  requests: ReceivedRequest[];
  reply: (res: ServerResponse) => void;
  close(): Promise<void>;
}

async function startFakeLlm(): Promise<FakeLlm> {
  const fake: FakeLlm = {
    baseURL: '',
    requests: [],
    reply: (res) => res.writeHead(503).end(),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"error":{"message":"not found"}}');
        return;
      }
      const received: ReceivedRequest = { headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')), abandoned: false };
      fake.requests.push(received);
      res.on('close', () => (received.abandoned = !res.writableFinished));
      fake.reply(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return fake;
}

/** The base URL of a port that was just free and is closed again: connections to it are refused. */
async function closedBaseURL(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}

const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 0, model: MODEL, choices, ...extra })}\n\n`;
const piece = (content: string) => chunk([{ index: 0, delta: { content }, finish_reason: null }]);

function startStream(res: ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  res.write(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]));
}

/** A whole streamed answer: the pieces, `finish_reason: "stop"`, the usage chunk, `[DONE]`. */
const streamed = (pieces: string[]) => (res: ServerResponse) => {
  startStream(res);
  for (const text of pieces) res.write(piece(text));
  res.write(chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]));
  res.write(chunk([], { usage: USAGE }));
  res.end('data: [DONE]\n\n');
};

describe('example: LLM chat agent over an OpenAI-compatible API (AGENTS_MODULE=examples/llm/agents.ts)', () => {
  let fake: FakeLlm;
  let api: TestApi;
  let loaded: AgentRegistry;

  beforeAll(async () => {
    fake = await startFakeLlm();
    const settings: Record<string, string> = {
      OPENAI_BASE_URL: fake.baseURL,
      OPENAI_API_KEY: KEY,
      LLM_MODEL: MODEL,
      LLM_SYSTEM_PROMPT: SYSTEM,
      LLM_MAX_RETRIES: '0',
    };
    const saved = Object.fromEntries(Object.keys(settings).map((name) => [name, process.env[name]]));
    Object.assign(process.env, settings);
    try {
      loaded = await loadAgents(MODULE);
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    // Beside it, the same agent made with the factory, aimed at a port nothing listens on.
    const unreachable = chatAgent({ id: 'llm-unreachable', baseURL: await closedBaseURL(), apiKey: KEY, model: MODEL, maxRetries: 0 });
    api = await startTestApi({ agents: new AgentRegistry([...loaded.list(), unreachable]) });
  });

  afterAll(async () => {
    // The fake first: a stream it still holds (a failed cancel test) ends, so the node ends too.
    await fake?.close();
    await api?.close();
  });

  it('the module registers llm-chat alone, as AGENTS_MODULE loads it', async () => {
    expect(loaded.list().map((agent) => agent.id)).toEqual(['llm-chat']);
    const { body } = await call(`${api.url}/api/agents`);
    expect(body.agents).toContainEqual({ id: 'llm-chat', description: expect.stringContaining(MODEL), nodes: ['chat'], entry: 'chat' });
  });

  it('streams the tokens as custom events in order, stores the answer and usage, and sends the configured model, key and messages', async () => {
    fake.requests.length = 0;
    fake.reply = streamed(['Hel', 'lo', ', wor', 'ld!']);
    const stream = await openRunStream(api.url, { agent_id: 'llm-chat', input: { prompt: 'Say hello' } });
    expect(stream.status, stream.text()).toBe(200);
    await within('the run stream to end', stream.ended);
    const events = eventsOf(stream.frames).map((e) => e.event);
    expect(events.filter((e) => e.type === 'custom').map((e) => [e.node, e.name, e.data])).toEqual([
      ['chat', 'token', { index: 0, text: 'Hel' }],
      ['chat', 'token', { index: 1, text: 'lo' }],
      ['chat', 'token', { index: 2, text: ', wor' }],
      ['chat', 'token', { index: 3, text: 'ld!' }],
    ]);
    expect(events.at(-1)?.type).toBe('completed');

    const session = stream.headers['x-session-id'] as string;
    const { body: checkpoint } = await call(`${api.url}/api/sessions/state?session_id=${session}`);
    expect(checkpoint.state).toEqual({
      prompt: 'Say hello',
      answer: 'Hello, world!',
      finish_reason: 'stop',
      usage: USAGE,
      messages: [
        { role: 'user', content: 'Say hello' },
        { role: 'assistant', content: 'Hello, world!' },
      ],
    });

    expect(fake.requests).toHaveLength(1);
    const [request] = fake.requests;
    expect(request!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request!.body).toMatchObject({
      model: MODEL,
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: 'Say hello' },
      ],
    });

    // A second run on the session continues the conversation.
    fake.reply = streamed(['Bye.']);
    const waited = await postWait(api.url, { agent_id: 'llm-chat', session_id: session, input: { prompt: 'Now say bye' } });
    expect(waited.status, JSON.stringify(waited.body)).toBe(200);
    expect(waited.body).toMatchObject({ status: 'completed', state: { answer: 'Bye.' } });
    expect(fake.requests[1]!.body.messages).toEqual([
      { role: 'system', content: SYSTEM },
      { role: 'user', content: 'Say hello' },
      { role: 'assistant', content: 'Hello, world!' },
      { role: 'user', content: 'Now say bye' },
    ]);
    expect(waited.body.state.messages).toHaveLength(4);
  });

  it('an upstream 500 fails the run with an error naming the model, the status and the server\'s message, never the key', async () => {
    fake.requests.length = 0;
    fake.reply = (res) =>
      res
        .writeHead(500, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'the model is overloaded', type: 'server_error' } }));
    const waited = await postWait(api.url, { agent_id: 'llm-chat', input: { prompt: 'Hello?' } });
    expect(waited.status, JSON.stringify(waited.body)).toBe(200);
    expect(waited.body.status).toBe('failed');
    expect(waited.body.error).toBe(`The chat completion of model "${MODEL}" at ${fake.baseURL} failed: 500 the model is overloaded`);
    expect(waited.body.error).not.toContain(KEY);
    expect(waited.body.state.answer).toBeUndefined();
    // LLM_MAX_RETRIES=0: one request, no retry.
    expect(fake.requests).toHaveLength(1);
  });

  it('a server that cannot be reached fails the run with the connection error and its cause', async () => {
    const waited = await postWait(api.url, { agent_id: 'llm-unreachable', input: { prompt: 'Hello?' } });
    expect(waited.body.status).toBe('failed');
    expect(waited.body.error).toMatch(/^The chat completion of model "test-model" at http:\/\/127\.0\.0\.1:\d+\/v1 failed: Connection error\. \(.*ECONNREFUSED.*\)$/);
  });

  it('an input without a prompt fails the run before any request', async () => {
    fake.requests.length = 0;
    const waited = await postWait(api.url, { agent_id: 'llm-chat', input: { text: 'no prompt' } });
    expect(waited.body).toMatchObject({ status: 'failed', error: 'The input needs "prompt": a non-empty string.' });
    expect(fake.requests).toHaveLength(0);
  });

  it('a cancel mid-stream closes the upstream request and ends the run cancelled, with no answer stored', async () => {
    fake.requests.length = 0;
    // The server sends one piece, then holds the stream open.
    fake.reply = (res) => {
      startStream(res);
      res.write(piece('Once upon'));
    };
    const stream = await openRunStream(api.url, { agent_id: 'llm-chat', input: { prompt: 'Tell a long story' } });
    expect(stream.status, stream.text()).toBe(200);
    const runId = stream.headers['x-run-id'] as string;
    const session = stream.headers['x-session-id'] as string;
    await waitFor('the first token event', () => eventsOf(stream.frames).some((e) => e.event.type === 'custom'));
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.abandoned).toBe(false);

    const cancelled = await cancelRun(api.url, runId);
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    await waitFor('the upstream request to be closed', () => fake.requests[0]!.abandoned);
    await within('the run stream to end', stream.ended);
    const events = eventsOf(stream.frames).map((e) => e.event);
    expect(events.filter((e) => e.type === 'custom').map((e) => e.data)).toEqual([{ index: 0, text: 'Once upon' }]);
    expect(events.at(-1)?.type).toBe('cancelled');
    expect((await call(`${api.url}/api/runs/${runId}`)).body.status).toBe('cancelled');
    const { body: checkpoint } = await call(`${api.url}/api/sessions/state?session_id=${session}`);
    expect(checkpoint.state).toEqual({ prompt: 'Tell a long story' });
  });
});
