import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Client } from '../../node_modules/@langchain/react/node_modules/@langchain/langgraph-sdk/dist/client.js';
import { StreamController } from '../../node_modules/@langchain/react/node_modules/@langchain/langgraph-sdk/dist/stream/index.js';
import { loadConfig } from '../../src/config.js';
import { loadAgentsAndGraphs } from '../../src/main/process.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { BACKENDS, useGraphApi } from '../langgraph/graph-api.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { startSecuredTenants, tenantKeys, type SecuredTenants } from '../support/langgraph-sdk.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/*
 * LangGraph's streaming protocol (v2) over HTTP on agentplane, driven by the client of
 * `@langchain/react` 1.1 (its own @langchain/langgraph-sdk 1.11: StreamController, what
 * useStream runs, on its default SSE transport) against the graphs of examples/langgraph, on
 * memory and on Redis: the chat's tokens, its approval question, the answer after `respond`, a
 * second client joining the running run, state hydration; and the routes' own answers.
 */

// chat.ts picks its model when it loads: the fake one, each chunk a little apart so a second client can join mid-answer.
vi.stubEnv('OPENAI_API_KEY', '');
vi.stubEnv('FAKE_MODEL_DELAY_MS', '120');
const registry = await loadAgentsAndGraphs(loadConfig({ SERVICE_LANGGRAPH_JSON: 'examples/langgraph/langgraph.json' }));

const SUNNY = 'It is always sunny in Paris.';

/** The frames of an event stream's text, each as its lines, as an SSE client reads them: comment lines (keep-alives) are not part of any. */
function framesOf(text: string): string[][] {
  return text
    .split('\n\n')
    .map((block) => block.split('\n').filter((line) => line !== '' && !line.startsWith(':')))
    .filter((lines) => lines[0]?.startsWith('id: '));
}

interface Shown {
  type: string;
  text: string;
}

/** What a page would show of a message: its kind and its text. */
function shownOf(message: { type?: unknown; text?: unknown; content?: unknown; getType?: () => string }): Shown {
  const type = typeof message.getType === 'function' ? message.getType() : String(message.type);
  const text = typeof message.text === 'string' ? message.text : typeof message.content === 'string' ? message.content : '';
  return { type, text };
}

describe.each(BACKENDS)("LangGraph's streaming protocol with @langchain/react's client (%s)", (backend) => {
  const api = useGraphApi(backend, () => registry.list());

  /** A StreamController as useStream makes it, on the API, with every state of its root snapshot recorded. */
  function controllerOf(assistantId: string, threadId: string | null = null) {
    const client = new Client({ apiUrl: api.app.url });
    const controller = new StreamController({ assistantId, client, threadId, messagesKey: 'messages' });
    const release = controller.activate();
    const answers: string[] = [];
    controller.rootStore.subscribe(() => {
      const last = controller.rootStore.getSnapshot().messages.at(-1);
      const shown = last ? shownOf(last as never) : undefined;
      if (shown?.type === 'ai' && shown.text !== '' && answers.at(-1) !== shown.text) answers.push(shown.text);
    });
    const snapshot = () => controller.rootStore.getSnapshot();
    const messages = () => snapshot().messages.map((message) => shownOf(message as never));
    return { controller, snapshot, messages, answers, close: async () => { release(); await controller.dispose(); } };
  }

  const question = (snapshot: () => { interrupts: { value?: unknown }[] }) => (snapshot().interrupts[0]?.value as { question?: string } | undefined)?.question;

  it('chat: streams the tool call, asks for approval, and after respond() streams the answer word by word', async () => {
    const chat = controllerOf('chat');
    try {
      await chat.controller.submit({ messages: [{ type: 'human', content: 'Paris' }] });
      expect(question(chat.snapshot)).toBe('Run get_weather({"city":"Paris"})?');
      expect(chat.snapshot().isLoading).toBe(false);
      const threadId = chat.snapshot().threadId!;
      await waitFor('the tool call shown', () => chat.messages().length === 2);
      expect(chat.messages().map((m) => m.type)).toEqual(['human', 'ai']);
      expect((await api.get(`/threads/${threadId}`)).body.status).toBe('interrupted');

      await chat.controller.respond({ approved: true });
      await waitFor('the answer and the controller at rest', () => chat.messages().at(-1)?.text === SUNNY && !chat.snapshot().isLoading);
      expect(chat.messages()).toEqual([
        { type: 'human', text: 'Paris' },
        { type: 'ai', text: '' },
        { type: 'tool', text: SUNNY },
        { type: 'ai', text: SUNNY },
      ]);
      expect(chat.snapshot().interrupts).toEqual([]);
      expect(chat.snapshot().error).toBeUndefined();
      // The words came one by one: growing prefixes of the answer before the whole.
      const partial = chat.answers.filter((text) => text !== SUNNY && SUNNY.startsWith(text));
      expect(partial.length).toBeGreaterThanOrEqual(3);
      expect((await api.get(`/threads/${threadId}`)).body.status).toBe('idle');
    } finally {
      await chat.close();
    }
  });

  it('a second turn on the same thread streams on the open event stream: a new question, then its answer', async () => {
    const chat = controllerOf('chat');
    try {
      await chat.controller.submit({ messages: [{ type: 'human', content: 'Paris' }] });
      await chat.controller.respond({ approved: true }, { interruptId: chat.snapshot().interrupts[0]!.id! });
      await waitFor('the first answer', () => chat.messages().at(-1)?.text === SUNNY && !chat.snapshot().isLoading);
      await chat.controller.submit({ messages: [{ type: 'human', content: 'Rome' }] });
      expect(question(chat.snapshot)).toBe('Run get_weather({"city":"Rome"})?');
      await chat.controller.respond({ approved: true }, { interruptId: chat.snapshot().interrupts[0]!.id! });
      await waitFor('the second answer', () => chat.messages().at(-1)?.text === 'It is always sunny in Rome.' && !chat.snapshot().isLoading);
      expect(chat.messages().map((m) => m.type)).toEqual(['human', 'ai', 'tool', 'ai', 'human', 'ai', 'tool', 'ai']);
    } finally {
      await chat.close();
    }
  });

  it('a second client opened on the thread mid-run hydrates its state and streams the rest of the running run', async () => {
    const first = controllerOf('chat');
    const second = { current: undefined as ReturnType<typeof controllerOf> | undefined };
    try {
      await first.controller.submit({ messages: [{ type: 'human', content: 'Paris' }] });
      const threadId = first.snapshot().threadId!;
      const answered = first.controller.respond({ approved: true });
      await waitFor('the first words of the answer', () => first.answers.some((text) => text !== SUNNY && SUNNY.startsWith(text)), 15_000, 10);
      const joined = (second.current = controllerOf('chat', threadId));
      await joined.controller.hydrationPromise;
      await waitFor('the joined client loading', () => joined.snapshot().isLoading, 10_000, 10);
      await waitFor('the joined client at rest with the answer', () => !joined.snapshot().isLoading && joined.messages().at(-1)?.text === SUNNY);
      expect(joined.messages().map((m) => m.type)).toEqual(['human', 'ai', 'tool', 'ai']);
      await answered;
    } finally {
      await second.current?.close();
      await first.close();
    }
  });

  it('a client opened on a thread paused at the question shows it, and its respond() resumes the run', async () => {
    const first = controllerOf('chat');
    await first.controller.submit({ messages: [{ type: 'human', content: 'Oslo' }] });
    const threadId = first.snapshot().threadId!;
    await first.close();
    const later = controllerOf('chat', threadId);
    try {
      await later.controller.hydrationPromise;
      expect(question(later.snapshot)).toBe('Run get_weather({"city":"Oslo"})?');
      // The snapshot takes the hydrated messages on its next flush (a timer).
      await waitFor('the hydrated messages', () => later.messages().length === 2);
      expect(later.messages().map((m) => m.type)).toEqual(['human', 'ai']);
      // Named: right after hydration the interrupt is known from the state, before the event stream replayed it.
      await later.controller.respond({ approved: false }, { interruptId: later.snapshot().interrupts[0]!.id! });
      await waitFor('the refusal answered', () => later.messages().at(-1)?.text === 'The user declined to run get_weather.' && !later.snapshot().isLoading);
      expect(later.messages().map((m) => m.type)).toEqual(['human', 'ai', 'tool', 'ai']);
    } finally {
      await later.close();
    }
  });

  it('echo: a run on a new thread ends with its values', async () => {
    const echo = controllerOf('echo');
    try {
      await echo.controller.submit({ message: 'hi' });
      await waitFor('the values of the run', () => (echo.snapshot().values as Record<string, unknown>).echoed === true);
      expect(echo.snapshot().values).toMatchObject({ message: 'hi', echoed: true });
      expect(echo.snapshot().isLoading).toBe(false);
      // A refused command reaches the caller with its status and the server's body (the SDK's `HTTP 409: {…}`).
      await expect(echo.controller.respond(true, { interruptId: 'nope' })).rejects.toThrow(/^HTTP 409: .*does not wait on interrupt/);
    } finally {
      await echo.close();
    }
  });

  it('answers state.get, refuses what it does not serve with a 400 naming it, and 404 for a thread it does not hold', async () => {
    const threadId = `protocol-${randomUUID()}`;
    const command = (method: string, params?: unknown, id = 7) => api.post(`/threads/${threadId}/commands`, { id, method, ...(params === undefined ? {} : { params }) });
    expect((await command('state.get', { namespace: [] })).status).toBe(404);
    const started = await command('run.start', { assistant_id: 'echo', input: { message: 'yo' } }, 1);
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect(started.body).toMatchObject({ type: 'success', id: 1, result: { run_id: expect.any(String) }, meta: { thread_id: threadId } });
    await api.runUntil(started.body.result.run_id, 'completed');
    const state = await command('state.get', { namespace: [], keys: ['echoed'] });
    expect(state.body).toMatchObject({ type: 'success', id: 7, result: { values: { echoed: true }, checkpoint: { id: expect.any(String) } } });

    const refused = await command('agent.getTree', {});
    expect([refused.status, refused.body.error.code]).toEqual([400, 'bad_request']);
    expect(refused.body.error.message).toContain('agent.getTree is not supported');
    expect((await command('no.such', {})).body.error.message).toContain('unknown command "no.such"');
    expect((await command('run.start', { input: {} })).body.error.message).toMatch(/^body\.params\.assistant_id: /);
    expect((await api.post(`/threads/${threadId}/commands`, { method: 'state.get' })).body.error.message).toMatch(/^body\.id: /);
    const notPaused = await command('input.respond', { interrupt_id: 'abc', response: true, namespace: [] });
    expect([notPaused.status, notPaused.body.error.code]).toEqual([409, 'conflict']);

    expect((await api.post(`/threads/nope-${randomUUID()}/stream/events`, { channels: ['values'] })).status).toBe(404);
    const badFilter = await api.post(`/threads/${threadId}/stream/events`, { channels: [] });
    expect([badFilter.status, badFilter.body.error.message]).toEqual([400, expect.stringMatching(/^body\.channels: /)]);
  });

  it('input.respond takes the batch form (responses) and resumes the thread with a new run', async () => {
    const threadId = `protocol-${randomUUID()}`;
    const command = (id: number, method: string, params: unknown) => api.post(`/threads/${threadId}/commands`, { id, method, params });
    const started = await command(1, 'run.start', { assistant_id: 'chat', input: { messages: [{ type: 'human', content: 'Lima' }] } });
    await api.runUntil(started.body.result.run_id, 'interrupted');
    const state = await api.get(`/threads/${threadId}/state`);
    const interruptId = state.body.tasks[0].interrupts[0].id as string;
    const answered = await command(2, 'input.respond', { responses: [{ interrupt_id: interruptId, response: { approved: true }, namespace: [] }] });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    expect(answered.body).toEqual({ type: 'success', id: 2, result: {}, meta: { thread_id: threadId } });
    await waitFor('the thread idle', async () => (await api.get(`/threads/${threadId}`)).body.status === 'idle');
    const final = await command(3, 'state.get', { namespace: [] });
    expect((final.body.result.values.messages as { content: string }[]).at(-1)!.content).toBe('It is always sunny in Lima.');
    // The paused run was replaced by the resuming one: two runs, both `success` as LangGraph's server lists them.
    const runs = (await api.get(`/threads/${threadId}/runs`)).body as { status: string }[];
    expect(runs.map((run) => run.status)).toEqual(['success', 'success']);
  });

  it('an event stream sends the latest run from its start, filtered by channel, each event with its id, method and seq', async () => {
    const threadId = `protocol-${randomUUID()}`;
    const started = await api.post(`/threads/${threadId}/commands`, { id: 1, method: 'run.start', params: { assistant_id: 'echo', input: { message: 'x' } } });
    await api.runUntil(started.body.result.run_id, 'completed');
    const controller = new AbortController();
    const response = await fetch(`${api.app.url}/threads/${threadId}/stream/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ channels: ['lifecycle', 'values'] }),
      signal: controller.signal,
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = response.body!.getReader();
    let text = '';
    try {
      await waitFor('the completed lifecycle', async () => {
        const { value } = await reader.read();
        text += new TextDecoder().decode(value);
        return text.includes('"event":"completed"');
      });
    } finally {
      controller.abort();
    }
    const events = framesOf(text).map(([idLine, eventLine, dataLine]) => {
      const data = JSON.parse(dataLine!.slice('data: '.length));
      expect(idLine).toBe(`id: ${data.event_id}`);
      expect(eventLine).toBe(`event: ${data.method}`);
      return data;
    });
    expect(events.map((e) => (e.method === 'lifecycle' ? `lifecycle:${e.params.data.event}` : e.method))).toEqual(['lifecycle:running', 'values', 'values', 'lifecycle:completed']);
    expect(events.at(-2).params.data).toMatchObject({ message: 'x', echoed: true });
    const seqs = events.map((e) => e.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(new Set(seqs).size).toBe(seqs.length);
  });
});

describe('the streaming protocol across two API replicas on one Redis', () => {
  let redis: TestRedis | undefined;
  const apps: TestApi[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    const env = { SERVICE_KEY_PREFIX: uniquePrefix('protocol') };
    for (let i = 0; i < 2; i += 1) apps.push(await startTestApi({ agents: new AgentRegistry(registry.list()), redisUrl: redis.url, env }));
    // Runs execute in the first replica's process only: the second serves commands and streams of runs it does not run.
    apps[0]!.composition.startExecuting();
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await redis?.stop();
  });

  /** A fetch sending each request to the next replica in turn. */
  function roundRobin(): { fetch: typeof fetch; replicas: number[] } {
    const replicas: number[] = [];
    let next = 0;
    const fetchNext: typeof fetch = (input, init) => {
      const replica = next++ % apps.length;
      replicas.push(replica);
      const url = new URL(input instanceof Request ? input.url : String(input));
      const target = new URL(apps[replica]!.url);
      url.host = target.host;
      return fetch(input instanceof Request ? new Request(url, input) : url, init);
    };
    return { fetch: fetchNext, replicas };
  }

  /** The event_id and seq of each event a replica's event stream sends on the thread, up to its completed lifecycle. */
  async function eventIds(app: TestApi, threadId: string): Promise<[string, number][]> {
    const controller = new AbortController();
    const response = await fetch(`${app.url}/threads/${threadId}/stream/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ channels: ['lifecycle', 'values', 'messages', 'input', 'updates'] }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    let text = '';
    try {
      await waitFor('the completed lifecycle', async () => {
        text += new TextDecoder().decode((await reader.read()).value);
        return text.includes('"event":"completed"');
      });
    } finally {
      controller.abort();
    }
    return framesOf(text)
      .map((lines) => JSON.parse(lines[2]!.slice('data: '.length)) as { event_id: string; seq: number })
      .map((event) => [event.event_id, event.seq]);
  }

  it('a client whose calls alternate between the replicas streams the chat to its end; both replicas send the same events', async () => {
    const { fetch: alternating, replicas } = roundRobin();
    const client = new Client({ apiUrl: apps[0]!.url, callerOptions: { fetch: alternating } });
    const controller = new StreamController({ assistantId: 'chat', client, threadId: null, messagesKey: 'messages', fetch: alternating });
    const release = controller.activate();
    const messages = () => controller.rootStore.getSnapshot().messages.map((message) => shownOf(message as never));
    try {
      await controller.submit({ messages: [{ type: 'human', content: 'Paris' }] });
      const { interrupts, threadId } = controller.rootStore.getSnapshot();
      expect((interrupts[0]?.value as { question?: string }).question).toBe('Run get_weather({"city":"Paris"})?');
      await controller.respond({ approved: true }, { interruptId: interrupts[0]!.id! });
      await waitFor('the answer', () => messages().at(-1)?.text === SUNNY && !controller.rootStore.getSnapshot().isLoading);
      expect(messages().map((m) => m.type)).toEqual(['human', 'ai', 'tool', 'ai']);
      expect(new Set(replicas)).toEqual(new Set([0, 1]));

      const [first, second] = await Promise.all(apps.map((app) => eventIds(app, threadId!)));
      expect(first!.length).toBeGreaterThan(5);
      expect(second).toEqual(first);
    } finally {
      release();
      await controller.dispose();
    }
  });
});

describe.each(BACKENDS)('the streaming protocol routes with API keys and roles (%s)', (backend) => {
  const keys = tenantKeys('protocol');
  let tenants: SecuredTenants | undefined;
  beforeAll(async () => {
    // Keep-alive lines far apart: what an event stream sends at once is not the heartbeat's.
    tenants = await startSecuredTenants(backend, { keys, agents: new AgentRegistry(registry.list()), env: { SERVICE_SSE_HEARTBEAT_MS: '600000' } });
  });
  afterAll(async () => {
    await tenants?.close();
  });

  const post = (key: string, path: string, json: unknown) => call(`${tenants!.app.url}${path}`, { method: 'POST', json, headers: { 'X-Api-Key': key } });

  it("another tenant's thread is 404 on both routes; a viewer may watch a thread but not command it", async () => {
    const threadId = `protocol-${randomUUID()}`;
    const start = { id: 1, method: 'run.start', params: { assistant_id: 'echo', input: { message: 'a' } } };
    const started = await post(keys.a, `/threads/${threadId}/commands`, start);
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect((await post(keys.aViewer, `/threads/${threadId}/commands`, start)).status).toBe(403);
    const respond = { id: 3, method: 'input.respond', params: { interrupt_id: 'abc', response: true } };
    const viewerRespond = await post(keys.aViewer, `/threads/${threadId}/commands`, respond);
    expect([viewerRespond.status, viewerRespond.body.error.code]).toEqual([403, 'forbidden']);
    expect((await post(keys.b, `/threads/${threadId}/commands`, { id: 2, method: 'state.get', params: { namespace: [] } })).status).toBe(404);
    expect((await post(keys.b, `/threads/${threadId}/stream/events`, { channels: ['values'] })).status).toBe(404);
    const watched = new AbortController();
    try {
      const response = await fetch(`${tenants!.app.url}/threads/${threadId}/stream/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'X-Api-Key': keys.aViewer },
        body: JSON.stringify({ channels: ['lifecycle'] }),
        signal: watched.signal,
      });
      expect([response.status, response.headers.get('content-type')]).toEqual([200, 'text/event-stream']);
    } finally {
      watched.abort();
    }
  });

  it("a viewer may read the thread's state with state.get: a read, as GET …/state is", async () => {
    const threadId = `protocol-${randomUUID()}`;
    const started = await post(keys.a, `/threads/${threadId}/commands`, { id: 1, method: 'run.start', params: { assistant_id: 'echo', input: { message: 'seen' } } });
    await waitFor('the run done', async () => (await post(keys.a, `/threads/${threadId}/commands`, { id: 2, method: 'state.get', params: {} })).body.result?.values?.echoed === true);
    const read = await post(keys.aViewer, `/threads/${threadId}/commands`, { id: 3, method: 'state.get', params: { namespace: [], keys: ['message'] } });
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    expect(read.body).toMatchObject({ type: 'success', id: 3, result: { values: { message: 'seen' } }, meta: { thread_id: threadId } });
    expect(started.status).toBe(200);
  });

  it('the event stream of a thread with no run answers its headers and a first line at once, not at the first keep-alive', async () => {
    const thread = await post(keys.a, '/threads', {});
    const controller = new AbortController();
    try {
      const response = await fetch(`${tenants!.app.url}/threads/${thread.body.thread_id}/stream/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'X-Api-Key': keys.aViewer },
        body: JSON.stringify({ channels: ['lifecycle', 'values'] }),
        signal: controller.signal,
      });
      expect([response.status, response.headers.get('content-type')]).toEqual([200, 'text/event-stream']);
      const first = await response.body!.getReader().read();
      expect(new TextDecoder().decode(first.value)).toBe(': keep-alive\n');
    } finally {
      controller.abort();
    }
  });

  it('channel names, namespace segments and state keys are at most 256 characters: longer is 400 naming the field', async () => {
    const thread = await post(keys.a, '/threads', {});
    const events = `/threads/${thread.body.thread_id}/stream/events`;
    const long = 'c'.repeat(257);
    const channel = await post(keys.a, events, { channels: ['values', long] });
    expect([channel.status, channel.body.error.code, channel.body.error.message]).toEqual([400, 'bad_request', expect.stringMatching(/^body\.channels\.1: /)]);
    const namespace = await post(keys.a, events, { channels: ['values'], namespaces: [['agent', long]] });
    expect([namespace.status, namespace.body.error.message]).toEqual([400, expect.stringMatching(/^body\.namespaces\.0\.1: /)]);
    const key = await post(keys.a, `/threads/${thread.body.thread_id}/commands`, { id: 1, method: 'state.get', params: { keys: [long] } });
    expect([key.status, key.body.error.message]).toEqual([400, expect.stringMatching(/^body\.params\.keys\.0: /)]);
    // 256 is a name.
    const fits = await post(keys.a, `/threads/${thread.body.thread_id}/commands`, { id: 2, method: 'state.get', params: { keys: ['k'.repeat(256)] } });
    expect([fits.status, fits.body.result?.values]).toEqual([200, {}]);
    const controller = new AbortController();
    try {
      const response = await fetch(`${tenants!.app.url}${events}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'X-Api-Key': keys.a },
        body: JSON.stringify({ channels: [`custom:${'n'.repeat(249)}`], namespaces: [['s'.repeat(256)]] }),
        signal: controller.signal,
      });
      expect(response.status).toBe(200);
    } finally {
      controller.abort();
    }
  });
});
