import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { tool } from '@langchain/core/tools';
import { builtInAgents } from '../../src/agents/index.js';
import { flushTracing, startTracing, stopTracing } from '../../src/observability/tracing.js';
import { defineAgent } from '../../src/runtime/agent.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { FAKE_CHAT_ATTRIBUTES, fakeChatModel, startFakeOpenAI } from '../support/fake-model.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { waitFor } from '../support/wait.js';

const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';

const lookup = tool(async ({ city }: { city: string }) => `sunny in ${city}`, { name: 'lookup_weather', description: 'The weather', schema: z.object({ city: z.string() }) });

let receiver: OtlpReceiver;
let fake: Awaited<ReturnType<typeof startFakeOpenAI>>;
let agents: AgentRegistry;
/** What `ctx.callbacks` held in the last run's first node. */
let handed: unknown[] = [];

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  fake = await startFakeOpenAI();
  const model = fakeChatModel(fake.baseURL);
  const asker = defineAgent({
    id: 'native-asker',
    description: 'Asks a model and a tool in one node, a prompt piped into the model in the next.',
    entry: 'ask',
    nodes: {
      ask: async (state, ctx) => {
        handed = ctx.callbacks;
        const answer = await model.invoke(String(state.question), { callbacks: ctx.callbacks, signal: ctx.signal });
        const weather = await lookup.invoke({ city: 'Paris' }, { callbacks: ctx.callbacks });
        return { answer: answer.text, weather };
      },
      summarize: async (state, ctx) => {
        const chain = ChatPromptTemplate.fromTemplate('Summarize: {answer}').pipe(model);
        return { summary: (await chain.invoke({ answer: String(state.answer) }, { callbacks: ctx.callbacks })).text };
      },
    },
    edges: { ask: 'summarize', summarize: '__end__' },
  });
  agents = new AgentRegistry([...builtInAgents, asker]);
});
afterAll(async () => {
  await stopTracing();
  await fake.close();
  await receiver.close();
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
});

async function runToEnd(app: TestApi): Promise<{ id: string; status: string; state: Record<string, unknown> }> {
  const response = await fetch(`${app.url}/api/runs/wait`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
    body: JSON.stringify({ agent_id: 'native-asker', input: { question: 'what?' } }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { id: string; status: string; state: Record<string, unknown> };
}

describe('OpenTelemetry traces of model calls in native nodes', () => {
  it('a LangChain model or tool called with ctx.callbacks is a GenAI span under the node (through a chain too); no message content by default', async () => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    expect(startTracing('embedded')).toBe(true);
    const app = await startTestApi({ agents });
    try {
      const run = await runToEnd(app);
      expect(run.status).toBe('completed');
      // server, run, node ask, its chat and tool, node summarize, its chat
      const spans = await waitFor('the 7 spans of the run', async () => {
        await flushTracing();
        const found = receiver.spans.filter((span) => span.traceId === CALLER_TRACE);
        return found.length >= 7 && found;
      });
      const named = (name: string): ReceivedSpan[] => spans.filter((span) => span.name === name);
      const [attempt] = named('run native-asker');
      const [ask] = named('node ask');
      const [summarize] = named('node summarize');
      expect(ask).toMatchObject({ parentSpanId: attempt!.spanId });
      expect(summarize).toMatchObject({ parentSpanId: attempt!.spanId });

      const chats = named('chat gpt-test');
      expect(chats.map((chat) => chat.parentSpanId).sort()).toEqual([ask!.spanId, summarize!.spanId].sort());
      for (const chat of chats) {
        expect(chat.kind).toBe(3);
        expect(chat.attributes).toMatchObject(FAKE_CHAT_ATTRIBUTES);
        expect(chat.attributes).not.toHaveProperty('gen_ai.input.messages');
        expect(chat.attributes).not.toHaveProperty('gen_ai.output.messages');
      }
      const [toolSpan] = named('execute_tool lookup_weather');
      expect(toolSpan).toMatchObject({ parentSpanId: ask!.spanId });
      expect(toolSpan!.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup_weather' });
      expect(toolSpan!.attributes).not.toHaveProperty('gen_ai.tool.call.arguments');
      // The chain (prompt | model) is no span of its own: the model's span sits under the node.
      expect(spans.map((span) => span.name).sort()).toEqual(
        ['POST /api/runs/wait', 'run native-asker', 'node ask', 'chat gpt-test', 'execute_tool lookup_weather', 'node summarize', 'chat gpt-test'].sort(),
      );
    } finally {
      await app.close();
      await stopTracing();
      delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    }
  });

  it('tracing off: ctx.callbacks is empty, the model is called all the same and nothing is sent', async () => {
    expect(startTracing('embedded')).toBe(false);
    const requests = receiver.contentTypes.length;
    const app = await startTestApi({ agents });
    try {
      const run = await runToEnd(app);
      expect(run).toMatchObject({ status: 'completed', state: { answer: '42', weather: 'sunny in Paris', summary: '42' } });
      expect(handed).toEqual([]);
    } finally {
      await app.close();
    }
    await flushTracing();
    expect(receiver.contentTypes.length).toBe(requests);
  });
});
