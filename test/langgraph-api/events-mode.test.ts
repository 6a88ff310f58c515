import { describe, expect, it } from 'vitest';
import { BACKENDS, collect, useLangGraphApi } from './runs-support.js';

/*
 * The `events` stream mode, as LangGraph's server streams it: the run's LangChain events
 * (streamEvents v2) each as an `events` frame, but the graph's own output chunks, which are the
 * other modes' frames; a failing graph's stream still ends with its `error` frame.
 */

const input = { messages: [{ type: 'human', content: 'hello', id: 'human-1' }] };

describe.each(BACKENDS)('the events stream mode (%s)', (backend) => {
  const api = useLangGraphApi(backend);

  it("a model called in a node: the chains' and the model's start, stream and end", async () => {
    const thread = (await api.client.threads.create()).thread_id;
    const parts = await collect(api.client.runs.stream(thread, 'lg-chat', { input, streamMode: 'events' }));
    expect(new Set(parts.map((p) => p.event))).toEqual(new Set(['metadata', 'events']));
    const events = parts.filter((p) => p.event === 'events').map((p) => p.data);
    expect(new Set(events.map((e) => e.event))).toEqual(new Set(['on_chain_start', 'on_chain_end', 'on_chat_model_start', 'on_chat_model_stream', 'on_chat_model_end']));
    // The graph's own start first and its end last, with its run id; the model's tokens in order.
    expect(events[0]).toMatchObject({ event: 'on_chain_start', run_id: expect.any(String) });
    expect(events.at(-1)).toMatchObject({ event: 'on_chain_end', run_id: events[0].run_id });
    const tokens = events.filter((e) => e.event === 'on_chat_model_stream').map((e) => e.data.chunk.content ?? e.data.chunk.kwargs?.content);
    expect(tokens.join('')).toBe('hi!');
    expect(events.find((e) => e.event === 'on_chat_model_start').metadata).toMatchObject({ langgraph_node: 'model' });
    // The run went as any other: its state holds the answer.
    const state = await api.client.threads.getState<{ messages: { content: string }[] }>(thread);
    expect(state.values.messages.map((m) => m.content)).toEqual(['hello', 'hi!']);
  });

  it('events beside other modes: values frames as without events', async () => {
    const thread = (await api.client.threads.create()).thread_id;
    const parts = await collect(api.client.runs.stream(thread, 'lg-two', { input: { word: 'e' }, streamMode: ['events', 'values'] }));
    expect(parts.filter((p) => p.event === 'values').map((p) => p.data.steps)).toEqual([[], ['first'], ['first', 'second']]);
    expect(parts.some((p) => p.event === 'events' && p.data.event === 'on_chain_start')).toBe(true);
    expect(parts.some((p) => p.event === 'events' && p.data.event === 'on_chain_stream' && p.data.name === 'LangGraph')).toBe(false);
  });

  it('a failing graph: its stream ends with the error frame', async () => {
    const thread = (await api.client.threads.create()).thread_id;
    const parts = await collect(api.client.runs.stream(thread, 'lg-failing', { input: { word: 'x' }, streamMode: ['debug', 'events'] }));
    expect(parts.some((p) => p.event === 'events')).toBe(true);
    expect(parts.at(-1)).toMatchObject({ event: 'error', data: { error: 'Error', message: 'boom' } });
  });
});
