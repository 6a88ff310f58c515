import type { AIMessage } from '@langchain/core/messages';
import { ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { Command, END, MessagesAnnotation, START, StateGraph, interrupt } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';
import { chatModel } from './model.js';

const getWeather = tool(({ city }) => `It is always sunny in ${city}.`, {
  name: 'get_weather',
  description: 'The current weather in a city.',
  schema: z.object({ city: z.string().describe('The city, e.g. "Paris".') }),
});

const model = chatModel().bindTools([getWeather]);

type State = typeof MessagesAnnotation.State;

const lastToolCalls = (state: State) => (state.messages.at(-1) as AIMessage).tool_calls ?? [];

async function agent(state: State) {
  return { messages: [await model.invoke(state.messages)] };
}

/** `true` or `{ "approved": true }` approves; any other answer declines. */
function approves(answer: unknown): boolean {
  return answer === true || (typeof answer === 'object' && answer !== null && (answer as { approved?: unknown }).approved === true);
}

/**
 * A human approves each tool call before anything runs (one interrupt per call). The tools run
 * only if every call of the turn is approved; otherwise each call is answered as declined and
 * the model replies to that.
 */
function review(state: State): Command {
  const calls = lastToolCalls(state);
  const answers = calls.map((call) => interrupt({ question: `Run ${call.name}(${JSON.stringify(call.args)})?`, tool_call: call }));
  if (answers.every(approves)) return new Command({ goto: 'tools' });
  const declined = calls.map((call) => new ToolMessage({ tool_call_id: call.id ?? '', name: call.name, content: `The user declined to run ${call.name}.` }));
  return new Command({ goto: 'agent', update: { messages: declined } });
}

/**
 * A chat agent with one tool, `get_weather`, and a human approval before it runs:
 * `agent` → `review` (interrupt) → `tools` → `agent` → end. The model is `model.ts`'s.
 */
export const graph = new StateGraph(MessagesAnnotation)
  .addNode('agent', agent)
  .addNode('review', review, { ends: ['tools', 'agent'] })
  .addNode('tools', new ToolNode([getWeather]))
  .addEdge(START, 'agent')
  .addConditionalEdges('agent', (state) => (lastToolCalls(state).length ? 'review' : END), ['review', END])
  .addEdge('tools', 'agent')
  .compile();
