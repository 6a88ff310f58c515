import type { Client } from 'openapi-fetch';
import { ApiError } from './errors.js';
import type { components, paths } from './schema.js';
import { readSse } from './sse.js';

export type RunEvent = components['schemas']['RunEvent'];

/** One event of a stream with its id: resume after it with `lastEventId`. */
export interface StreamedEvent {
  id: string;
  event: RunEvent;
}

/** The reconnection delay when the server has not sent `retry:` (it sends 3000). */
const DEFAULT_RETRY_MS = 3_000;

export interface EventStreamOptions {
  /** Only the events of this session. */
  session?: string;
  /** Start after this event id: the retained events after it come first, then live ones. */
  lastEventId?: string;
  /** Stops the stream (the iteration then ends without an error). */
  signal?: AbortSignal;
  /** Delay before reconnecting. @defaultValue the server's `retry:` (3000 ms) */
  retryMs?: number;
  /**
   * Connection attempts in a row that may fail (network error, 429, 5xx) before the iteration
   * throws the last error. A 4xx other than 429 throws at once. @defaultValue Infinity
   */
  maxRetries?: number;
  /** Called each time a connection is established, with the id it resumes after. */
  onConnect?: (resumingAfter: string | undefined) => void;
}

/**
 * GET /api/events/stream as an async iteration that survives disconnects: whenever the
 * connection drops or the server ends it, it reconnects after the retry delay and resumes
 * after the last id received (`last_event_id`), so nothing is missed or repeated.
 * The id travels as the query parameter rather than the Last-Event-ID header, which a browser
 * would have to preflight. Ends only when the caller stops iterating or aborts `signal`.
 */
export async function* streamEvents(client: Client<paths>, options: EventStreamOptions = {}): AsyncGenerator<StreamedEvent> {
  const { signal } = options;
  let lastEventId = options.lastEventId;
  let retryMs = options.retryMs ?? DEFAULT_RETRY_MS;
  let failures = 0;
  while (!signal?.aborted) {
    let body: ReadableStream<Uint8Array>;
    try {
      body = await connect(client, options.session, lastEventId, signal);
    } catch (error) {
      if (signal?.aborted) return;
      if (error instanceof ApiError && !error.retryable) throw error;
      failures += 1;
      if (failures > (options.maxRetries ?? Infinity)) throw error;
      await pause(retryMs, signal);
      continue;
    }
    failures = 0;
    options.onConnect?.(lastEventId);
    try {
      const messages = readSse(body, { onRetry: (ms) => (retryMs = options.retryMs ?? ms) });
      for await (const message of messages) {
        if (message.id !== '') lastEventId = message.id;
        yield { id: message.id, event: JSON.parse(message.data) as RunEvent };
      }
    } catch (error) {
      // A dropped connection is what this loop is for; anything else is the caller's to see.
      if (signal?.aborted) return;
      if (error instanceof SyntaxError) throw error;
    }
    await pause(retryMs, signal);
  }
}

/** Opens one connection; rejects with an ApiError for an error answer. */
async function connect(
  client: Client<paths>,
  session: string | undefined,
  lastEventId: string | undefined,
  signal: AbortSignal | undefined,
): Promise<ReadableStream<Uint8Array>> {
  const query = { ...(session !== undefined ? { session } : {}), ...(lastEventId !== undefined ? { last_event_id: lastEventId } : {}) };
  const { data, error, response } = await client.GET('/api/events/stream', {
    params: { query },
    parseAs: 'stream',
    headers: { Accept: 'text/event-stream' },
    ...(signal ? { signal } : {}),
  });
  if (error !== undefined || !response.ok) throw ApiError.fromResponse(response, error);
  if (!data) throw new Error('The event stream answered without a body.');
  return data;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
