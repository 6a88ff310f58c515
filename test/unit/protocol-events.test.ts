import { describe, expect, it } from 'vitest';
import type { RunEvent, StoredEvent } from '../../src/domain/types.js';
import { matchesFilter, ProtocolTranslator, seqOf, type ProtocolEvent } from '../../src/langgraph-server/protocol-events.js';

/*
 * The translation of a thread's run events (the bus's) into LangGraph's streaming protocol:
 * pure, so what each replica makes of the same events is the same.
 */

let clock = 1_800_000_000_000;
function stored(run: string, event: Partial<RunEvent> & Pick<RunEvent, 'type'>): StoredEvent {
  clock += 1;
  return { id: `${clock}-0`, tenant: 't', event: { session: 'th', run_id: run, agent_id: 'chat', ts: new Date(clock).toISOString(), ...event } };
}
const chunk = (run: string, name: string, data: unknown) => stored(run, { type: 'stream', name, data });
const meta = { langgraph_node: 'agent' };

/** Each event as `method:detail` (the lifecycle's status, the message event's kind). */
function brief(events: ProtocolEvent[]): string[] {
  return events.map((e) => {
    const data = e.params.data as { event?: string; interrupt_id?: string };
    if (e.method === 'lifecycle' || e.method === 'messages') return `${e.method}:${data.event}`;
    if (e.method === 'input.requested') return `input:${data.interrupt_id}`;
    return e.method;
  });
}

describe('ProtocolTranslator', () => {
  it('streams a message token by token as content-block deltas, and finishes it at the step values', () => {
    const t = new ProtocolTranslator();
    const events = [
      stored('r1', { type: 'node_start', node: 'agent' }),
      chunk('r1', 'messages', [{ id: 'm1', type: 'ai', content: 'It ' }, meta]),
      chunk('r1', 'messages', [{ id: 'm1', type: 'ai', content: 'is sunny.' }, meta]),
      chunk('r1', 'values', { messages: [{ id: 'm1', type: 'ai', content: 'It is sunny.' }] }),
      stored('r1', { type: 'completed' }),
    ].flatMap((e) => t.translate(e));
    expect(brief(events)).toEqual([
      'lifecycle:running',
      'messages:message-start',
      'messages:content-block-start',
      'messages:content-block-delta',
      'messages:content-block-delta',
      'messages:content-block-finish',
      'messages:message-finish',
      'values',
      'lifecycle:completed',
    ]);
    expect(events[1]!.params).toMatchObject({ node: 'agent', data: { role: 'ai', id: 'm1' } });
    expect(events.filter((e) => (e.params.data as { event?: string }).event === 'content-block-delta').map((e) => e.params.data)).toEqual([
      { event: 'content-block-delta', index: 0, delta: { type: 'text-delta', text: 'It ' } },
      { event: 'content-block-delta', index: 0, delta: { type: 'text-delta', text: 'is sunny.' } },
    ]);
    expect(events[5]!.params.data).toEqual({ event: 'content-block-finish', index: 0, content: { type: 'text', text: 'It is sunny.' } });
  });

  it('turns a tool call into a tool_call block with parsed arguments, and a tool message into a finished message with its call id', () => {
    const t = new ProtocolTranslator();
    const call = { id: 'm1', type: 'ai', content: '', tool_call_chunks: [{ index: 0, id: 'call_1', name: 'get_weather', args: '{"city":"Paris"}' }] };
    const events = [
      chunk('r1', 'messages', [call, meta]),
      chunk('r1', 'updates', { agent: { messages: [call] } }),
      chunk('r1', 'messages', [{ id: 'm2', type: 'tool', tool_call_id: 'call_1', content: 'Sunny.' }, { langgraph_node: 'tools' }]),
    ].flatMap((e) => t.translate(e));
    const data = events.map((e) => e.params.data);
    expect(data).toContainEqual({ event: 'content-block-start', index: 0, content: { type: 'tool_call_chunk', id: 'call_1', name: 'get_weather', args: '', index: 0 } });
    expect(data).toContainEqual({ event: 'content-block-finish', index: 0, content: { type: 'tool_call', id: 'call_1', name: 'get_weather', args: { city: 'Paris' } } });
    expect(data).toContainEqual({ event: 'message-start', role: 'tool', id: 'm2', tool_call_id: 'call_1' });
    expect(brief(events).slice(-4)).toEqual(['messages:content-block-start', 'messages:content-block-delta', 'messages:content-block-finish', 'messages:message-finish']);
    expect(brief(events)).toContain('updates');
  });

  it('asks each interrupt once, and a paused run cancelled by its resume sends nothing more', () => {
    const t = new ProtocolTranslator();
    const asked = { __interrupt__: [{ id: 'i1', value: { question: 'Run?' } }] };
    const events = [
      chunk('r1', 'updates', asked),
      chunk('r1', 'values', asked),
      stored('r1', { type: 'interrupted', approval_id: 'r1.i1' }),
      stored('r1', { type: 'cancelled', error: 'resumed by a new run on its thread (command.resume)' }),
      stored('r2', { type: 'node_start', node: 'review' }),
    ].flatMap((e) => t.translate(e));
    expect(brief(events)).toEqual(['lifecycle:running', 'input:i1', 'lifecycle:interrupted', 'lifecycle:running']);
    expect(events[1]!.params.data).toEqual({ interrupt_id: 'i1', payload: { question: 'Run?' } });
  });

  it('fails a run that fails or is cancelled while running, with its error', () => {
    const t = new ProtocolTranslator();
    const events = [stored('r1', { type: 'node_start' }), stored('r1', { type: 'failed', error: 'Boom' })].flatMap((e) => t.translate(e));
    expect(events.at(-1)!.params.data).toEqual({ event: 'failed', graph_name: 'chat', error: 'Boom' });
  });

  it('goes on with a native run answered after its pause', () => {
    const t = new ProtocolTranslator();
    const events = [stored('r1', { type: 'node_start' }), stored('r1', { type: 'interrupted' }), stored('r1', { type: 'node_start' }), stored('r1', { type: 'completed' })].flatMap((e) => t.translate(e));
    expect(brief(events)).toEqual(['lifecycle:running', 'lifecycle:interrupted', 'lifecycle:running', 'lifecycle:completed']);
  });

  it('gives the same ids and seqs to the same events on every translator', () => {
    const events = [stored('r1', { type: 'node_start' }), chunk('r1', 'values', { a: 1 }), stored('r1', { type: 'completed' })];
    const ids = (t: ProtocolTranslator) => events.flatMap((e) => t.translate(e)).map((e) => [e.event_id, e.seq]);
    expect(ids(new ProtocolTranslator())).toEqual(ids(new ProtocolTranslator()));
    expect(seqOf('1800000000000-3', 2)).toBe(1_800_000_000_000_032);
    expect(seqOf('5-200', 20)).toBe(5_999);
  });
});

describe('matchesFilter', () => {
  const event = (method: ProtocolEvent['method'], namespace: string[], data: unknown = {}): ProtocolEvent => ({ type: 'event', event_id: 'x', seq: 10, method, params: { namespace, timestamp: 0, data } });

  it('matches channels (input for input.requested, custom:<name> under custom), namespace prefixes with depth, and since', () => {
    expect(matchesFilter(event('input.requested', []), { channels: ['input'] })).toBe(true);
    expect(matchesFilter(event('values', []), { channels: ['messages'] })).toBe(false);
    expect(matchesFilter(event('custom', [], { name: 'progress', payload: 1 }), { channels: ['custom'] })).toBe(true);
    expect(matchesFilter(event('custom', [], { name: 'progress', payload: 1 }), { channels: ['custom:other'] })).toBe(false);
    expect(matchesFilter(event('values', ['sub:1', 'deep:2']), { channels: ['values'], namespaces: [[]], depth: 1 })).toBe(false);
    expect(matchesFilter(event('values', ['sub:1']), { channels: ['values'], namespaces: [['sub']], depth: 0 })).toBe(true);
    expect(matchesFilter(event('values', []), { channels: ['values'], since: 10 })).toBe(false);
  });
});
