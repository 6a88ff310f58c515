import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { tool } from '@langchain/core/tools';
import { Annotation, END, interrupt, START, StateGraph } from '@langchain/langgraph';
import { builtInAgents } from '../../src/agents/index.js';
import { flushTracing, startTracing, stopTracing } from '../../src/observability/tracing.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { FAKE_CHAT_ATTRIBUTES, fakeChatModel, startFakeOpenAI, type ChatOnFakeServer } from '../support/fake-model.js';
import { graphAgent } from '../support/langgraph.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { waitFor } from '../support/wait.js';

const lookup = tool(async ({ city }: { city: string }) => `sunny in ${city}`, { name: 'lookup_weather', description: 'The weather', schema: z.object({ city: z.string() }) });

const State = Annotation.Root({ question: Annotation<string>, answer: Annotation<string>, weather: Annotation<string> });

function tracedGraph(model: ChatOnFakeServer) {
  // The model and the tool are called without passing the config: LangChain's context carries the callbacks.
  const inner = new StateGraph(State)
    .addNode('ask', async (state) => ({ answer: (await model.invoke(state.question)).text, weather: await lookup.invoke({ city: 'Paris' }) }))
    .addEdge(START, 'ask')
    .addEdge('ask', END)
    .compile();
  return new StateGraph(State)
    .addNode('prepare', (state) => ({ question: state.question.trim() }))
    .addNode('inner', inner)
    .addNode('finish', (state) => ({ answer: `${state.answer}!` }))
    .addEdge(START, 'prepare')
    .addEdge('prepare', 'inner')
    .addEdge('inner', 'finish')
    .addEdge('finish', END)
    .compile();
}

const failingGraph = new StateGraph(State)
  .addNode('boom', (): Partial<typeof State.State> => {
    throw new RangeError('out of range');
  })
  .addEdge(START, 'boom')
  .addEdge('boom', END)
  .compile();

const askingGraph = new StateGraph(State)
  .addNode('review', (state) => ({ answer: String(interrupt({ question: state.question })) }))
  .addEdge(START, 'review')
  .addEdge('review', END)
  .compile();

let receiver: OtlpReceiver;
let fake: Awaited<ReturnType<typeof startFakeOpenAI>>;
let agents: AgentRegistry;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  fake = await startFakeOpenAI();
  const model = fakeChatModel(fake.baseURL);
  agents = new AgentRegistry([...builtInAgents, graphAgent('lg-traced', tracedGraph(model), ['prepare', 'inner', 'finish']), graphAgent('lg-fails', failingGraph, ['boom']), graphAgent('lg-asks', askingGraph, ['review'])]);
});
afterAll(async () => {
  await stopTracing();
  await fake.close();
  await receiver.close();
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  delete process.env.OTEL_EXPORTER_OTLP_PROTOCOL;
  delete process.env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT;
  delete process.env.AGENTPLANE_OTEL_RECORD_TENANT;
});

/** Starts tracing with these OTEL_* settings (and an app traced by it); the previous SDK is stopped first. */
async function tracedApp(env: Record<string, string>): Promise<TestApi> {
  await stopTracing();
  Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, env);
  expect(startTracing('embedded')).toBe(true);
  return startTestApi({ agents });
}

async function runToEnd(app: TestApi, agentId: string): Promise<{ id: string; session_id: string; status: string }> {
  const response = await fetch(`${app.url}/api/runs/wait`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ agent_id: agentId, input: { question: ' what? ' } }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { id: string; session_id: string; status: string };
}

/** The spans of one trace once its run span and `count` spans in all arrived. */
async function traceOf(runId: string, count: number): Promise<{ run: ReceivedSpan; spans: ReceivedSpan[]; named(name: string): ReceivedSpan }> {
  return waitFor(`the ${count} spans of run ${runId}`, async () => {
    await flushTracing();
    const run = receiver.spans.find((span) => span.name.startsWith('run ') && span.attributes['agentplane.run.id'] === runId);
    const spans = run ? receiver.spans.filter((span) => span.traceId === run.traceId) : [];
    if (!run || spans.length < count) return undefined;
    const named = (name: string) => {
      const found = spans.filter((span) => span.name === name);
      expect(found.map((span) => span.name), `one span ${name} in ${spans.map((span) => span.name).join(', ')}`).toEqual([name]);
      return found[0]!;
    };
    return { run, spans, named };
  });
}

describe('OpenTelemetry traces of LangGraph graphs (embedded)', () => {
  it('traces each task (a subgraph nested), the model call with its token usage and the tool call; no message content by default', async () => {
    const app = await tracedApp({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    try {
      const run = await runToEnd(app, 'lg-traced');
      expect(run.status).toBe('completed');
      // server, run, prepare, inner, ask, chat, tool, finish
      const { run: attempt, named } = await traceOf(run.id, 8);
      expect(attempt.attributes).toMatchObject({ 'agentplane.run.status': 'completed', 'agentplane.agent.id': 'lg-traced', 'agentplane.session.id': run.session_id });
      expect(attempt.attributes).not.toHaveProperty('agentplane.tenant');
      for (const task of ['prepare', 'inner', 'finish']) {
        expect(named(`task ${task}`), task).toMatchObject({ parentSpanId: attempt.spanId, kind: 1 });
        expect(named(`task ${task}`).attributes).toMatchObject({ 'agentplane.run.id': run.id, 'agentplane.node.id': task });
      }
      const ask = named('task ask');
      expect(ask.parentSpanId).toBe(named('task inner').spanId);
      const chat = named('chat gpt-test');
      expect(chat).toMatchObject({ parentSpanId: ask.spanId, kind: 3 });
      expect(chat.attributes).toMatchObject(FAKE_CHAT_ATTRIBUTES);
      expect(chat.attributes).not.toHaveProperty('gen_ai.input.messages');
      expect(chat.attributes).not.toHaveProperty('gen_ai.output.messages');
      const toolSpan = named('execute_tool lookup_weather');
      expect(toolSpan.parentSpanId).toBe(ask.spanId);
      expect(toolSpan.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup_weather' });
      expect(toolSpan.attributes).not.toHaveProperty('gen_ai.tool.call.arguments');
      expect(receiver.contentTypes.at(-1)).toBe('application/json');

      // The stored task spans carry the ids of the exported ones.
      const { traces: stored } = (await (await fetch(`${app.url}/api/traces?session_id=${run.session_id}`)).json()) as { traces: Record<string, unknown>[] };
      expect(stored.find((span) => span.name === 'prepare')).toMatchObject({ trace_id: attempt.traceId, trace_span_id: named('task prepare').spanId });
      expect(stored.find((span) => span.name === 'inner')).toMatchObject({ trace_span_id: named('task inner').spanId });
    } finally {
      await app.close();
    }
  });

  it('records message content with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, the tenant with AGENTPLANE_OTEL_RECORD_TENANT=true', async () => {
    const app = await tracedApp({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true', AGENTPLANE_OTEL_RECORD_TENANT: 'true' });
    try {
      const run = await runToEnd(app, 'lg-traced');
      const { run: attempt, named } = await traceOf(run.id, 8);
      expect(attempt.attributes['agentplane.tenant']).toBe('DefaultTenant');
      const chat = named('chat gpt-test');
      expect(JSON.parse(chat.attributes['gen_ai.input.messages'] as string)).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'what?' }] }]);
      expect(JSON.parse(chat.attributes['gen_ai.output.messages'] as string)).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: '42' }], finish_reason: 'stop' }]);
      expect(named('execute_tool lookup_weather').attributes).toMatchObject({ 'gen_ai.tool.call.arguments': expect.stringContaining('Paris'), 'gen_ai.tool.call.result': 'sunny in Paris' });
    } finally {
      await app.close();
    }
  });

  it('an interrupt is an event of its task span (not an error) and of the run span', async () => {
    const app = await tracedApp({});
    try {
      const run = await runToEnd(app, 'lg-asks');
      expect(run.status).toBe('interrupted');
      const { run: attempt, named } = await traceOf(run.id, 3);
      const review = named('task review');
      expect(review).toMatchObject({ status: 0, parentSpanId: attempt.spanId });
      expect(review.events.map((event) => event.name)).toEqual(['agentplane.interrupted']);
      expect(attempt.events).toContainEqual(expect.objectContaining({ name: 'agentplane.interrupted', attributes: expect.objectContaining({ 'agentplane.node.id': 'review' }) }));
      expect(attempt.attributes['agentplane.run.status']).toBe('interrupted');
    } finally {
      await app.close();
    }
  });

  it("a failed run's span and its task's are errors with the error's class", async () => {
    const app = await tracedApp({});
    try {
      const run = await runToEnd(app, 'lg-fails');
      expect(run.status).toBe('failed');
      const { run: attempt, named } = await traceOf(run.id, 3);
      expect(attempt).toMatchObject({ status: 2 });
      expect(attempt.attributes).toMatchObject({ 'agentplane.run.status': 'failed', 'error.type': 'RangeError' });
      expect(named('task boom')).toMatchObject({ status: 2, parentSpanId: attempt.spanId });
      expect(named('task boom').attributes['error.type']).toBe('RangeError');
    } finally {
      await app.close();
    }
  });
});
