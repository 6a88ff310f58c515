import type { Client } from 'openapi-fetch';
import { ApiError } from './errors.js';
import { streamEvents, type RunEvent, type StreamedEvent } from './events.js';
import type { components, paths } from './schema.js';
import { readSse } from './sse.js';

export type Run = components['schemas']['Run'];
export type WaitedRun = components['schemas']['WaitedRun'];
export type StartRunBody = NonNullable<paths['/api/runs']['post']['requestBody']>['content']['application/json'];
export type StartRunWaitBody = NonNullable<paths['/api/runs/wait']['post']['requestBody']>['content']['application/json'];

/** The event types after which a run does not move until something else happens. */
export const STOP_EVENT_TYPES: ReadonlySet<RunEvent['type']> = new Set(['completed', 'failed', 'cancelled', 'interrupted']);

/** The events of one run, as POST /api/runs/stream sends them, with the run's ids. */
export interface RunStream extends AsyncGenerator<StreamedEvent, void, undefined> {
  runId: string;
  sessionId: string;
}

/**
 * POST /api/runs/stream: starts a run and resolves, once the server accepted it, with an
 * iteration over its events that ends after the one that ends or pauses it (`completed`,
 * `failed`, `cancelled`, `interrupted`). If the connection drops before that, the iteration
 * carries on from the last id on /api/events/stream (filtered to the run), without a gap (if
 * it drops before the first event, with the live events only: there is no id to resume after).
 * Rejects with an ApiError when the run cannot start (400, 409…).
 */
export async function startRunStream(
  client: Client<paths>,
  body: StartRunBody,
  options: { signal?: AbortSignal; retryMs?: number } = {},
): Promise<RunStream> {
  const { data, error, response } = await client.POST('/api/runs/stream', {
    body,
    parseAs: 'stream',
    headers: { Accept: 'text/event-stream' },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (error !== undefined || !response.ok || !data) throw ApiError.fromResponse(response, error);
  const runId = response.headers.get('x-run-id') ?? '';
  const sessionId = response.headers.get('x-session-id') ?? '';
  return Object.assign(followRun(client, data, runId, sessionId, options), { runId, sessionId });
}

async function* followRun(
  client: Client<paths>,
  body: ReadableStream<Uint8Array>,
  runId: string,
  sessionId: string,
  options: { signal?: AbortSignal; retryMs?: number },
): AsyncGenerator<StreamedEvent, void, undefined> {
  let lastEventId: string | undefined;
  try {
    for await (const message of readSse(body)) {
      const event = JSON.parse(message.data) as RunEvent;
      lastEventId = message.id;
      yield { id: message.id, event };
      if (event.run_id === runId && STOP_EVENT_TYPES.has(event.type)) return;
    }
  } catch (error) {
    if (options.signal?.aborted) return;
    if (error instanceof SyntaxError) throw error;
  }
  // The response ended before the run stopped (a dropped connection, a replica shutting down).
  for await (const streamed of streamEvents(client, { ...options, session: sessionId, lastEventId })) {
    if (streamed.event.run_id !== runId) continue;
    yield streamed;
    if (STOP_EVENT_TYPES.has(streamed.event.type)) return;
  }
}
