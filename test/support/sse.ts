import { EventSource } from 'eventsource';
import type { RunEvent } from '../../src/domain/types.js';
import { waitFor } from './wait.js';

export interface ReceivedEvent {
  id: string;
  event: RunEvent;
}

/** A WHATWG EventSource client that records events and which replica served each connection. */
export interface SseClient {
  events: ReceivedEvent[];
  /** `X-Served-By` of every (re)connection, in order. */
  servedBy: string[];
  /** Status of every (re)connection attempt's response (or 0 when it failed), in order. */
  attempts: number[];
  /** Resolves once `count` connections have opened. */
  opened(count?: number, timeoutMs?: number): Promise<void>;
  /** Waits for an event matching `predicate`. */
  waitForEvent(predicate: (e: ReceivedEvent) => boolean, timeoutMs?: number): Promise<ReceivedEvent>;
  close(): void;
}

export function connectSse(url: string, headers: Record<string, string> = {}): SseClient {
  const events: ReceivedEvent[] = [];
  const servedBy: string[] = [];
  const attempts: number[] = [];
  const source = new EventSource(url, {
    fetch: async (input, init) => {
      try {
        const response = await fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } });
        attempts.push(response.status);
        if (response.ok) servedBy.push(response.headers.get('x-served-by') ?? '?');
        return response;
      } catch (error) {
        attempts.push(0);
        throw error;
      }
    },
  });
  source.onmessage = (message) => {
    events.push({ id: message.lastEventId, event: JSON.parse(message.data as string) as RunEvent });
  };
  return {
    events,
    servedBy,
    attempts,
    opened: async (count = 1, timeoutMs = 15_000) => {
      await waitFor(`${count} SSE connection(s)`, () => servedBy.length >= count && source.readyState === source.OPEN, timeoutMs);
    },
    waitForEvent: (predicate, timeoutMs = 20_000) =>
      waitFor('an SSE event', () => events.find(predicate), timeoutMs).catch((error: unknown) => {
        const detail = `connection attempts ${attempts.join(',') || 'none'}, served by ${servedBy.join(',')}, state ${source.readyState}, ${events.length} events`;
        throw new Error(`${(error as Error).message} (${detail})`, { cause: error });
      }),
    close: () => source.close(),
  };
}
