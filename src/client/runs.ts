import type { Client } from 'openapi-fetch';
import { streamEvents, type RunEvent, type StreamedEvent } from './events.js';
import type { components, paths } from './schema.js';
import { readSse } from './sse.js';
import { startWithRetries, type StartOptions } from './start.js';

export type Run = components['schemas']['Run'];
export type WaitedRun = components['schemas']['WaitedRun'];
export type StartRunBody = NonNullable<paths['/api/runs']['post']['requestBody']>['content']['application/json'];
export type StartRunWaitBody = NonNullable<paths['/api/runs/wait']['post']['requestBody']>['content']['application/json'];
export type RunTicket = components['schemas']['RunTicket'];

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
 * Rejects with an ApiError when the run cannot start (400, 409…). The start is sent with an
 * Idempotency-Key and retried with it while the answer is 429/5xx ({@link StartOptions}); a
 * retry that finds the run already stopped gets a stream that ends at once.
 */
export async function startRunStream(client: Client<paths>, body: StartRunBody, options: StartOptions & { retryMs?: number } = {}): Promise<RunStream> {
  let runId = '';
  let sessionId = '';
  const data = await startWithRetries(options, async (headers) => {
    const answer = await client.POST('/api/runs/stream', {
      body,
      parseAs: 'stream',
      headers: { Accept: 'text/event-stream', ...headers },
      ...(options.signal ? { signal: options.signal } : {}),
    });
    runId = answer.response.headers.get('x-run-id') ?? '';
    sessionId = answer.response.headers.get('x-session-id') ?? '';
    return answer;
  });
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
  // With no event id to resume after, a run that already stopped (a retried start answered
  // from its Idempotency-Key, whose stream ends at once) has nothing more to come.
  if (lastEventId === undefined && (await hasStopped(client, runId, options.signal))) return;
  for await (const streamed of streamEvents(client, { ...options, session: sessionId, lastEventId })) {
    if (streamed.event.run_id !== runId) continue;
    yield streamed;
    if (STOP_EVENT_TYPES.has(streamed.event.type)) return;
  }
}

async function hasStopped(client: Client<paths>, runId: string, signal: AbortSignal | undefined): Promise<boolean> {
  const { data } = await client.GET('/api/runs/{id}', { params: { path: { id: runId } }, ...(signal ? { signal } : {}) });
  return data !== undefined && STOP_EVENT_TYPES.has(data.status as RunEvent['type']);
}
