import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { RunEvent, Span } from '../../src/domain/types.js';
import { loadAgentsAndGraphs } from '../../src/main/process.js';
import { BACKENDS, useGraphApi, type GraphApi } from '../langgraph/graph-api.js';
import { openRunStream, within } from '../runs/wait.js';
import { brief } from '../support/events.js';
import { eventsOf, type Received } from '../support/sse.js';

/**
 * The graphs of examples/langgraph/ served as its README says: the registry loaded from
 * SERVICE_LANGGRAPH_JSON=examples/langgraph/langgraph.json as a process loads it, the API on memory
 * and on Redis, each graph driven through the routes a user calls: echo and map-reduce through
 * POST /api/runs/wait (values, events, spans), chat through POST /api/runs/stream up to its
 * approval, answered yes (the tool runs, its result is the answer) or no (declined), its answer
 * streamed token by token as `custom` events named `messages`.
 */

const SERVICE_LANGGRAPH_JSON = 'examples/langgraph/langgraph.json';

// chat.ts picks its model when it loads: the fake one here, whatever this machine's environment holds.
vi.stubEnv('OPENAI_API_KEY', '');
const registry = await loadAgentsAndGraphs(loadConfig({ SERVICE_LANGGRAPH_JSON }));

/** A serialized LangChain message as the state and the `messages` events show it. */
interface Message {
  type: string;
  content: string;
  id?: string;
  tool_calls?: { name: string; args: Record<string, unknown>; id: string }[];
}

const turns = (messages: Message[]) => messages.map((m) => [m.type, m.content]);
const spanNames = (spans: Span[]) => spans.map((s) => `${s.name}:${String(s.attributes.status)}`).sort();
const flow = (events: RunEvent[]) => events.map(brief);
const isEnd = (event: RunEvent) => ['completed', 'failed', 'cancelled'].includes(event.type);

/** The model's chunks of one message: the `messages` events of node `agent` with its id. */
const tokensOf = (events: RunEvent[], message: Message) =>
  events.filter((e) => e.type === 'custom' && e.name === 'messages' && e.node === 'agent' && (e.data as Message).id === message.id).map((e) => (e.data as Message).content);

/** The session's state, its events replayed up to the run's end, and the run's spans (the root apart). */
async function shown(api: GraphApi, run: { id: string; session_id: string; agent_id: string }) {
  const state = await api.get(`/api/sessions/state?session_id=${run.session_id}`);
  expect(state.status).toBe(200);
  const events = (await api.replay(run.session_id, isEnd)).map((r) => r.event);
  expect(events.every((e) => e.run_id === run.id && e.agent_id === run.agent_id)).toBe(true);
  const traces = await api.get(`/api/traces?session_id=${run.session_id}`);
  expect(traces.status).toBe(200);
  const all = traces.body.traces as Span[];
  expect(all.filter((s) => s.parent_id === '')).toMatchObject([{ span_id: run.id, name: `run ${run.agent_id}` }]);
  const spans = all.filter((s) => s.parent_id !== '');
  expect(spans.every((s) => s.parent_id === run.id && s.attributes.node_id === s.name)).toBe(true);
  return { state: state.body, events, spans };
}

describe.each(BACKENDS)('the example graphs of examples/langgraph through the API (%s)', (backend) => {
  const api = useGraphApi(backend, () => registry.list());

  const wait = async (agent_id: string, input: unknown, session_id = `${agent_id}-${randomUUID()}`) => {
    const { status, body } = await api.post('/api/runs/wait', { agent_id, input, session_id, wait_ms: 20_000 });
    expect(status, JSON.stringify(body)).toBe(200);
    return body;
  };

  it('lists the three graphs of langgraph.json as agents with their nodes, echo in place of the built-in', async () => {
    const { body } = await api.get('/api/agents');
    const graphs = (body.agents as { id: string; nodes: string[]; entry: string }[]).filter((a) => ['echo', 'chat', 'map-reduce'].includes(a.id));
    expect(graphs).toEqual([
      { id: 'echo', description: 'LangGraph graph ./echo.ts:graph', nodes: ['receive', 'respond'], entry: '__start__' },
      { id: 'chat', description: 'LangGraph graph ./chat.ts:graph', nodes: ['agent', 'review', 'tools'], entry: '__start__' },
      { id: 'map-reduce', description: 'LangGraph graph ./map-reduce.ts:graph', nodes: ['count_letters', 'summarize'], entry: '__start__' },
    ]);
  });

  it('echo: /api/runs/wait answers the input plus echoed: true, through receive and respond', async () => {
    const run = await wait('echo', { message: 'hi', extra: 1 });
    expect(run).toMatchObject({ agent_id: 'echo', status: 'completed' });
    // An Annotation state keeps only its channels: `extra` is dropped.
    expect(run.state).toEqual({ message: 'hi', echoed: true });
    const { state, events, spans } = await shown(api, run);
    expect(state).toMatchObject({ node_id: '__end__', state: { message: 'hi', echoed: true } });
    // The run's checkpoint at __start__, then one per superstep (LangGraph's input checkpoint apart).
    const history = (await api.get(`/api/sessions/history?session_id=${run.session_id}`)).body.checkpoints;
    expect(history.map((c: { seq_num: number; node_id: string; state: unknown }) => [c.seq_num, c.node_id, c.state])).toEqual([
      [4, '__end__', { message: 'hi', echoed: true }],
      [3, 'respond', { message: 'hi' }],
      [2, 'receive', { message: 'hi' }],
      [1, '__start__', {}],
    ]);
    expect(flow(events)).toEqual(['node_start:receive', 'node_end:receive:ok', 'node_start:respond', 'node_end:respond:ok', 'completed']);
    expect(spanNames(spans)).toEqual(['receive:ok', 'respond:ok']);
  });

  it('echo: a non-empty "fail" fails the run in respond with that message', async () => {
    const run = await wait('echo', { message: 'hi', fail: 'no answer today' });
    expect(run).toMatchObject({ status: 'failed', error: 'no answer today' });
    const { state, events, spans } = await shown(api, run);
    expect(state).toMatchObject({ node_id: 'respond', state: { message: 'hi', fail: 'no answer today' } });
    expect(flow(events)).toEqual(['node_start:receive', 'node_end:receive:ok', 'node_start:respond', 'node_end:respond:error', 'failed']);
    expect(events.at(-1)).toMatchObject({ error: 'no answer today' });
    expect(spans.find((s) => s.name === 'respond')?.attributes).toMatchObject({ status: 'error', error: 'no answer today' });
  });

  it('map-reduce: three topics are three count_letters tasks in one step, joined by the reducer, then the summary', async () => {
    const run = await wait('map-reduce', { topics: ['a', 'bb', 'ccc'] });
    const results = ['a has 1 letter', 'bb has 2 letters', 'ccc has 3 letters'];
    const values = { topics: ['a', 'bb', 'ccc'], results, summary: results.join('; ') };
    expect(run).toMatchObject({ status: 'completed' });
    expect(run.state).toEqual(values);
    const { state, events, spans } = await shown(api, run);
    expect(state).toMatchObject({ node_id: '__end__', state: values });
    // The step that plans the three Sends names their node once.
    const history = (await api.get(`/api/sessions/history?session_id=${run.session_id}`)).body.checkpoints;
    expect(history.map((c: { node_id: string }) => c.node_id)).toEqual(['__end__', 'summarize', 'count_letters', '__start__']);
    const flowed = flow(events);
    // The three workers are planned together: their three starts come first, before any of them ends.
    expect(flowed.slice(0, 3)).toEqual(['node_start:count_letters', 'node_start:count_letters', 'node_start:count_letters']);
    expect(flowed.slice(3, 6)).toEqual(['node_end:count_letters:ok', 'node_end:count_letters:ok', 'node_end:count_letters:ok']);
    expect(flowed.slice(6)).toEqual(['node_start:summarize', 'node_end:summarize:ok', 'completed']);
    expect(spanNames(spans)).toEqual(['count_letters:ok', 'count_letters:ok', 'count_letters:ok', 'summarize:ok']);
  });

  /**
   * Starts chat on a new session through POST /api/runs/stream and reads it to its end: the
   * model's tool call, then the pause at `review`. Answers the run, the stream's events and the
   * pending approval.
   */
  const askWeather = async (city: string) => {
    const session_id = `chat-${randomUUID()}`;
    const stream = await openRunStream(api.app.url, { agent_id: 'chat', input: { messages: [{ role: 'user', content: city }] }, session_id });
    expect(stream.status).toBe(200);
    await within('the run stream to end at the pause', stream.ended);
    const received = eventsOf(stream.frames);
    const runId = String(stream.headers['x-run-id']);
    expect(flow(received.map((r) => r.event))).toEqual(['node_start:agent', 'custom:agent', 'node_end:agent:ok', 'node_start:review', 'interrupted:review']);
    const call = { name: 'get_weather', args: { city }, id: 'call_1', type: 'tool_call' };
    expect(received[1]!.event).toMatchObject({ name: 'messages', data: { type: 'ai', content: '', tool_calls: [call] } });

    const pending = await api.pendingOf(runId);
    const interrupted = received.at(-1)!;
    const question = `Run get_weather(${JSON.stringify({ city })})?`;
    expect(pending).toMatchObject([{ id: interrupted.event.approval_id, run_id: runId, session_id, agent_id: 'chat', node_id: 'review', prompt: question, payload: { question, tool_call: call } }]);
    expect(pending[0].id.startsWith(`${runId}.`)).toBe(true);
    const run = (await api.get(`/api/runs/${runId}`)).body;
    expect(run).toMatchObject({ status: 'interrupted', approval_id: pending[0].id });
    expect((await api.get(`/api/sessions/state?session_id=${session_id}`)).body).toMatchObject({ node_id: 'review' });
    return { run, approval: pending[0], last: interrupted };
  };

  /** The events after the pause, replayed from the run stream's last event id up to the run's end. */
  const afterPause = async (sessionId: string, last: Received) => (await api.replay(sessionId, isEnd, last.id)).map((r) => r.event);

  it('chat: the approval holds the tool call; {resume: {approved: true}} runs get_weather and its result is the answer, streamed token by token', async () => {
    const { run, approval, last } = await askWeather('Paris');
    const answered = await api.post('/api/approval/respond', { id: approval.id, resume: { approved: true }, wait_ms: 20_000 });
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ id: approval.id, status: 'approved', run: { id: run.id, status: 'completed' } });
    const messages = answered.body.run.state.messages as Message[];
    expect(turns(messages)).toEqual([
      ['human', 'Paris'],
      ['ai', ''],
      ['tool', 'It is always sunny in Paris.'],
      ['ai', 'It is always sunny in Paris.'],
    ]);
    expect((await api.get(`/api/approvals/${approval.id}`)).body).toMatchObject({ status: 'approved', resume: { approved: true } });

    const resumed = await afterPause(run.session_id, last);
    expect(flow(resumed).filter((e) => !e.startsWith('custom'))).toEqual([
      'approval_decided', 'node_start:review', 'node_end:review:ok', 'node_start:tools', 'node_end:tools:ok', 'node_start:agent', 'node_end:agent:ok', 'completed',
    ]);
    const answer = messages.at(-1)!;
    const tokens = tokensOf(resumed, answer);
    expect(tokens.length).toBeGreaterThan(1);
    expect(tokens.join('')).toBe(answer.content);
    // The tokens come while `agent` runs, before its end.
    const agentStart = resumed.findLastIndex((e) => brief(e) === 'node_start:agent');
    const agentEnd = resumed.findLastIndex((e) => brief(e) === 'node_end:agent:ok');
    expect(resumed.slice(agentStart + 1, agentEnd).map((e) => (e.data as Message).content)).toEqual(tokens);

    const { state, spans } = await shown(api, run);
    expect(state).toMatchObject({ node_id: '__end__' });
    expect(state.state).toEqual(answered.body.run.state);
    expect(spanNames(spans)).toEqual(['agent:ok', 'agent:ok', 'review:interrupted', 'review:ok', 'tools:ok']);
  });

  it.each([
    ['{approved: false}', { approved: false, comment: 'not now' }, 'rejected'],
    ['{resume: {approved: false}}', { resume: { approved: false } }, 'approved'],
  ])('chat: answering %s declines: the tool does not run, the model answers that it was declined', async (_name, answer, status) => {
    const { run, approval, last } = await askWeather('Oslo');
    const answered = await api.post('/api/approval/respond', { id: approval.id, ...answer, wait_ms: 20_000 });
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ id: approval.id, status, run: { id: run.id, status: 'completed' } });
    const messages = answered.body.run.state.messages as Message[];
    const declined = 'The user declined to run get_weather.';
    expect(turns(messages)).toEqual([
      ['human', 'Oslo'],
      ['ai', ''],
      ['tool', declined],
      ['ai', declined],
    ]);

    const resumed = await afterPause(run.session_id, last);
    expect(flow(resumed).filter((e) => !e.startsWith('custom'))).toEqual([
      'approval_decided', 'node_start:review', 'node_end:review:ok', 'node_start:agent', 'node_end:agent:ok', 'completed',
    ]);
    const tokens = tokensOf(resumed, messages.at(-1)!);
    expect(tokens.length).toBeGreaterThan(1);
    expect(tokens.join('')).toBe(declined);
    const { spans } = await shown(api, run);
    expect(spanNames(spans)).toEqual(['agent:ok', 'agent:ok', 'review:interrupted', 'review:ok']);
  });
});
