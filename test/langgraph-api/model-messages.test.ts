import { describe, expect, it } from 'vitest';
import { BACKENDS, collect, useLangGraphApi, type Part } from './runs-support.js';

/*
 * The frames of a chat model called inside a node, whichever LangGraph version the graph brings:
 * lg-chat runs on this project's LangGraph, lg-chat-11 streams as LangGraph 1.1 does (a model's
 * `messages` under the namespace of the task that called it). Either way the model belongs to
 * the root graph: legacy `messages` gives messages/metadata, messages/partial and
 * messages/complete; `messages-tuple` with subgraphs gives `messages` frames, not `messages|…`.
 */

const input = { messages: [{ type: 'human', content: 'hello', id: 'human-1' }] };
const partialsOf = (parts: Part[]) => parts.filter((p) => p.event === 'messages/partial').map((p) => p.data[0] as { id: string; content: string });

describe.each(BACKENDS)('the messages of a model called inside a node (%s)', (backend) => {
  const api = useLangGraphApi(backend);

  it.each(['lg-chat', 'lg-chat-11'])('legacy messages: metadata, partials growing to the answer, complete (%s)', async (graphId) => {
    const thread = (await api.client.threads.create()).thread_id;
    const parts = await collect(api.client.runs.stream(thread, graphId, { input, streamMode: 'messages' }));
    expect(new Set(parts.map((p) => p.event))).toEqual(new Set(['metadata', 'messages/metadata', 'messages/partial', 'messages/complete']));
    const partials = partialsOf(parts);
    expect(partials.map((m) => m.content)).toEqual(['h', 'hi', 'hi!']);
    const completed = parts.filter((p) => p.event === 'messages/complete').flatMap((p) => p.data as { id: string; type: string; content: string }[]);
    const answer = completed.find((m) => m.type === 'ai')!;
    expect(answer.content).toBe('hi!');
    expect(answer.id).toBe(partials.at(-1)!.id);
    expect(parts.at(-1)!.event).toBe('messages/complete');
    const metadata = parts.find((p) => p.event === 'messages/metadata')!.data;
    expect(metadata[answer.id].metadata).toMatchObject({ langgraph_node: 'model' });
  });

  it.each(['lg-chat', 'lg-chat-11'])('messages and values: both, the values last before the final complete (%s)', async (graphId) => {
    const thread = (await api.client.threads.create()).thread_id;
    const parts = await collect(api.client.runs.stream(thread, graphId, { input, streamMode: ['messages', 'values'] }));
    expect(new Set(parts.map((p) => p.event))).toEqual(new Set(['metadata', 'values', 'messages/metadata', 'messages/partial', 'messages/complete']));
    expect(parts.at(-1)!.event).toBe('messages/complete');
    expect(parts.findLast((p) => p.event === 'values')!.data.messages.map((m: { content: string }) => m.content)).toEqual(['hello', 'hi!']);
    expect(partialsOf(parts).at(-1)!.content).toBe('hi!');
  });

  it.each(['lg-chat', 'lg-chat-11'])('messages-tuple with subgraphs: a root node\'s model streams as messages (%s)', async (graphId) => {
    const thread = (await api.client.threads.create()).thread_id;
    const parts = await collect(api.client.runs.stream(thread, graphId, { input, streamMode: 'messages-tuple', streamSubgraphs: true }));
    expect(new Set(parts.map((p) => p.event))).toEqual(new Set(['metadata', 'messages']));
    expect(parts.filter((p) => p.event === 'messages').map((p) => p.data[0].content)).toEqual(['h', 'i', '!']);
  });
});
