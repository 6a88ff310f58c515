import type { StoredEvent } from '../domain/types.js';
import { MessageStreams, type Draft, type ProtocolMethod } from './protocol-messages.js';

export type { ProtocolMethod };

/**
 * The events of LangGraph's streaming protocol (v2) that agentplane sends on a thread's event
 * stream, made from the run events the bus holds: the same `stream` events (LangGraph stream
 * parts: mode, namespace, chunk) that `/threads/{id}/runs/stream` frames, plus the run's own
 * stop events for the lifecycle. One translator per connection reads a thread's events in bus
 * order; what it makes depends only on those events, so every replica (and every reconnect)
 * makes the same events with the same `event_id` and `seq`.
 */

/** One protocol event: `{type: "event", event_id, seq, method, params: {namespace, timestamp, node?, data}}`. */
export interface ProtocolEvent {
  type: 'event';
  /** `<bus event id>:<n>`: the n-th protocol event made of that run event. */
  event_id: string;
  /** Rises with the bus order (see {@link seqOf}); equal only for events made of bursts past its resolution. */
  seq: number;
  method: ProtocolMethod;
  params: { namespace: string[]; timestamp: number; node?: string; data: unknown };
}

/**
 * A protocol `seq` of a bus event id (`<ms>-<n>`) and the index of a protocol event made of it:
 * `ms * 1000 + n * 10 + index`, `n` and `index` capped at 99 and 9. Ordered as the bus orders its
 * events on every replica; a number a client compares, not a count (the protocol asks no more).
 */
export function seqOf(eventId: string, index: number): number {
  const [ms = 0, n = 0] = eventId.split('-').map(Number);
  return ms * 1000 + Math.min(n, 99) * 10 + Math.min(index, 9);
}

/** Where a run stands for its client: running, paused at an interrupt, or ended. */
type RunPhase = 'running' | 'interrupted' | 'ended';

interface RunTrack {
  phase: RunPhase;
  graph: string;
  messages: MessageStreams;
  /** Interrupt ids already asked (the `updates` and the `values` chunk both carry them). */
  asked: Set<string>;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A stream event's name `mode|ns1|ns2` as its mode and namespace. */
function partOf(name: string): { mode: string; namespace: string[] } {
  const [mode = '', ...namespace] = name.split('|');
  return { mode, namespace };
}

/** The pending interrupts `{id, value}` of a chunk's `__interrupt__`. */
function interruptsIn(chunk: unknown): { id: string; value: unknown }[] {
  if (!isObject(chunk) || !Array.isArray(chunk.__interrupt__)) return [];
  return chunk.__interrupt__.filter((entry): entry is { id: string; value: unknown } => isObject(entry) && typeof entry.id === 'string');
}

/**
 * Translates the run events of one thread, in bus order, into protocol events. A run's first
 * event opens it with `lifecycle: running`; its `stream` events become `messages` (the model's
 * chunks as message-start, content blocks and message-finish), `values`, `updates`,
 * `input.requested` (each interrupt once) and `custom`; its stop a terminal lifecycle
 * (`interrupted`, `completed`, `failed`). A paused run cancelled afterwards (a resume or a new
 * run replaced it) ends silently: its client saw it stop at the interrupt already.
 */
export class ProtocolTranslator {
  private readonly runs = new Map<string, RunTrack>();

  translate(stored: StoredEvent): ProtocolEvent[] {
    const { event } = stored;
    const drafts: Draft[] = [];
    let run = this.runs.get(event.run_id);
    if (!run) {
      run = { phase: 'running', graph: event.agent_id, messages: new MessageStreams(), asked: new Set() };
      this.runs.set(event.run_id, run);
      if (event.type !== 'cancelled') drafts.push(lifecycle('running', run.graph));
    } else if (run.phase === 'interrupted' && (event.type === 'node_start' || event.type === 'stream')) {
      // A native agent's answered pause: the same run goes on.
      run.phase = 'running';
      drafts.push(lifecycle('running', run.graph));
    }
    if (run.phase !== 'ended') drafts.push(...this.draftsOf(stored, run));
    const timestamp = Date.parse(event.ts) || 0;
    return drafts.map((draft, index) => ({
      type: 'event',
      event_id: `${stored.id}:${index}`,
      seq: seqOf(stored.id, index),
      method: draft.method,
      params: { namespace: draft.namespace, timestamp, ...(draft.node !== undefined ? { node: draft.node } : {}), data: draft.data },
    }));
  }

  private draftsOf(stored: StoredEvent, run: RunTrack): Draft[] {
    const { event } = stored;
    switch (event.type) {
      case 'stream':
        return this.partDrafts(event.name ?? 'values', event.data, run);
      case 'interrupted':
        run.phase = 'interrupted';
        return [...run.messages.finishAll(), lifecycle('interrupted', run.graph)];
      case 'completed':
        run.phase = 'ended';
        return [...run.messages.finishAll(), lifecycle('completed', run.graph)];
      case 'failed':
      case 'cancelled': {
        const paused = run.phase === 'interrupted';
        run.phase = 'ended';
        if (paused) return [];
        return [...run.messages.finishAll(), lifecycle('failed', run.graph, event.error ?? event.type)];
      }
      default:
        return [];
    }
  }

  private partDrafts(name: string, chunk: unknown, run: RunTrack): Draft[] {
    const { mode, namespace } = partOf(name);
    if (mode === 'messages') return run.messages.chunk(namespace, chunk);
    if (mode === 'custom') return [{ method: 'custom', namespace, data: { payload: chunk } }];
    if (mode !== 'values' && mode !== 'updates') return [];
    const drafts: Draft[] = [];
    for (const { id, value } of interruptsIn(chunk)) {
      if (run.asked.has(id)) continue;
      run.asked.add(id);
      drafts.push({ method: 'input.requested', namespace, data: { interrupt_id: id, payload: value } });
    }
    if (!isObject(chunk)) return drafts;
    const { __interrupt__: _asked, ...rest } = chunk;
    if (mode === 'values') {
      // A superstep ended: the messages its nodes streamed are complete.
      drafts.unshift(...run.messages.finishAll(namespace));
      if (Object.keys(rest).length > 0) drafts.push({ method: 'values', namespace, data: rest });
      return drafts;
    }
    for (const [node, values] of Object.entries(rest)) {
      drafts.push(...run.messages.finishAll(namespace, node));
      drafts.push({ method: 'updates', namespace, node, data: { node, values: isObject(values) ? values : {} } });
    }
    return drafts;
  }
}

function lifecycle(status: 'running' | 'interrupted' | 'completed' | 'failed', graph: string, error?: string): Draft {
  return { method: 'lifecycle', namespace: [], data: { event: status, graph_name: graph, ...(error !== undefined ? { error } : {}) } };
}

/** The channel a protocol event is on, as a client's filter names it (`custom:<name>` for a named custom event). */
export function channelOf(event: ProtocolEvent): string {
  if (event.method === 'input.requested') return 'input';
  if (event.method === 'custom') {
    const name = (event.params.data as { name?: unknown } | null)?.name;
    return typeof name === 'string' ? `custom:${name}` : 'custom';
  }
  return event.method;
}

/** What one event stream asks for: its `POST /threads/{id}/stream/events` body. */
export interface ProtocolFilter {
  channels: readonly string[];
  /** Namespace prefixes (a segment without `:` matches `segment:<task id>`); none: every namespace. */
  namespaces?: readonly (readonly string[])[] | undefined;
  /** How far below a prefix an event may be. */
  depth?: number | undefined;
  /** Only events with a greater `seq`. */
  since?: number | undefined;
}

function prefixMatches(namespace: readonly string[], prefix: readonly string[]): boolean {
  if (prefix.length > namespace.length) return false;
  return prefix.every((segment, i) => {
    const candidate = namespace[i]!;
    if (candidate === segment) return true;
    return !segment.includes(':') && candidate.split(':')[0] === segment;
  });
}

/** Whether `event` goes out on a stream with `filter`: as LangGraph's client matches its subscriptions. */
export function matchesFilter(event: ProtocolEvent, filter: ProtocolFilter): boolean {
  if (filter.since !== undefined && event.seq <= filter.since) return false;
  const channel = channelOf(event);
  if (!filter.channels.includes(channel) && !(channel.startsWith('custom:') && filter.channels.includes('custom'))) return false;
  const { namespaces, depth } = filter;
  if (!namespaces || namespaces.length === 0) return true;
  const { namespace } = event.params;
  return namespaces.some((prefix) => prefixMatches(namespace, prefix) && (depth === undefined || namespace.length - prefix.length <= depth));
}
