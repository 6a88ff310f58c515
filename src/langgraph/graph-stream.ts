import { nowIso } from '../domain/time.js';
import type { AnyGraph } from './graph-loader.js';

/** A chunk of the graph's stream (subgraphs on): its namespace, its mode, its data. */
export type Chunk = [string[], string, unknown];

/** Any other event of LangChain's streamEvents v2 (`on_chain_start`, `on_chat_model_stream`, …). */
export interface LangChainEvent {
  event: { event: string; run_id: string; tags?: string[]; data?: { chunk?: unknown } };
}

/**
 * Reads a stream as fast as it comes into a buffer and hands its chunks out in order. LangGraph
 * drops the chunks not yet read when a graph fails; the engine writes to storage per chunk, so
 * it reads them all first: a failed run still records every step before its failure.
 */
export async function* buffered<T>(stream: AsyncIterable<T>): AsyncGenerator<{ chunk: T; at: string }> {
  /** Each chunk with when it came (a task's start and end times, however late they are handled). */
  const chunks: { chunk: T; at: string }[] = [];
  let done = false;
  let failure: { error: unknown } | undefined;
  let wake: (() => void) | undefined;
  void (async () => {
    try {
      for await (const chunk of stream) {
        chunks.push({ chunk, at: nowIso() });
        wake?.();
      }
    } catch (error) {
      failure = { error };
    } finally {
      done = true;
      wake?.();
    }
  })();
  for (;;) {
    if (chunks.length > 0) {
      yield chunks.shift()!;
      continue;
    }
    if (done) break;
    await new Promise<void>((resolve) => (wake = resolve));
    wake = undefined;
  }
  if (failure) throw failure.error;
}

/**
 * The graph's stream read through LangChain's `streamEvents` v2, as LangGraph's server does for
 * the `events` mode: the root run's `on_chain_stream` events carry the graph's chunks; every
 * other event (but those tagged `langsmith:hidden`) goes out as it is, in the order it came.
 */
export async function* withEvents(graph: AnyGraph, input: unknown, options: Record<string, unknown>): AsyncGenerator<Chunk | LangChainEvent> {
  let root: string | undefined;
  const events = graph.streamEvents(input as never, { ...options, version: 'v2' } as never) as unknown as AsyncIterable<LangChainEvent['event']>;
  for await (const event of events) {
    // The first event is the graph's own start: its run is the root.
    root ??= event.run_id;
    if (event.tags?.includes('langsmith:hidden')) continue;
    if (event.event === 'on_chain_stream' && event.run_id === root) yield event.data!.chunk as Chunk;
    else yield { event };
  }
}
