import createFetchClient, { type Client } from 'openapi-fetch';
import { ApiError } from './errors.js';
import { streamEvents, type EventStreamOptions, type StreamedEvent } from './events.js';
import { startRunStream, type RunStream, type RunTicket, type StartRunBody, type StartRunWaitBody, type WaitedRun } from './runs.js';
import { startWithRetries, type StartOptions } from './start.js';
import type { components, paths } from './schema.js';

export { ApiError } from './errors.js';
export type { EventStreamOptions, RunEvent, StreamedEvent } from './events.js';
export { STOP_EVENT_TYPES, type Run, type RunStream, type RunTicket, type StartRunBody, type StartRunWaitBody, type WaitedRun } from './runs.js';
export type { StartOptions } from './start.js';
export { readSse, type ReadSseOptions, type SseMessage } from './sse.js';
export type { components, operations, paths } from './schema.js';

export type ApprovalRequest = components['schemas']['ApprovalRequest'];
export type Checkpoint = components['schemas']['Checkpoint'];
export type Schedule = components['schemas']['Schedule'];
export type Session = components['schemas']['Session'];
export type RespondBody = NonNullable<paths['/api/approval/respond']['post']['requestBody']>['content']['application/json'];
export type RespondResult = paths['/api/approval/respond']['post']['responses'][200]['content']['application/json'];

export interface ClientOptions {
  /** Where the API is, e.g. `http://localhost:8420`. */
  baseUrl: string;
  /** Sent in {@link ClientOptions.apiKeyHeader} (SERVICE_AUTH=apikey). */
  apiKey?: string;
  /** The API's SERVICE_API_KEY_HEADER. @defaultValue `X-Api-Key` */
  apiKeyHeader?: string;
  /** A JWT, sent as `Authorization: Bearer` (SERVICE_AUTH=jwt). */
  token?: string;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** The fetch to use. @defaultValue globalThis.fetch */
  fetch?: (request: Request) => Promise<Response>;
}

/** Per-call options of the helpers. */
export interface CallOptions {
  signal?: AbortSignal;
}

/**
 * The typed openapi-fetch client of the API (`GET`, `POST`… checked against the OpenAPI
 * document) with helpers for the calls that hold or stream. Helpers throw {@link ApiError} for
 * error answers; the raw methods return `{ data, error, response }` as openapi-fetch does.
 */
export interface AgentplaneClient extends Client<paths> {
  /**
   * The three ways to start a run. Each sends an `Idempotency-Key` (a new UUID per call unless
   * given) and tries again with it while the answer is 429 or 5xx or none came, so a start
   * that reached the server before its answer was lost is answered, not run twice.
   */
  runs: {
    /** POST /api/runs: resolves with the ticket of the queued run. */
    start(body: StartRunBody, options?: StartOptions): Promise<RunTicket>;
    /**
     * POST /api/runs/wait: starts a run and resolves when it stops (`completed`, `failed`,
     * `cancelled`, `interrupted` with its `approval`), with its `state`. When `wait_ms`
     * (default 60000) passes first it resolves with the run as it stands (`queued`/`running`).
     */
    wait(body: StartRunWaitBody, options?: StartOptions): Promise<WaitedRun>;
    /** POST /api/runs/stream: see {@link RunStream}; resumes on /api/events/stream if cut. */
    stream(body: StartRunBody, options?: StartOptions & { retryMs?: number }): Promise<RunStream>;
  };
  approvals: {
    /**
     * POST /api/approval/respond: `approved`, or a JSON answer `resume` (any JSON but null, at
     * most 64 KiB; alone it approves), or both. With `wait_ms` it resolves when the resumed run
     * next stops, the run in `run` (as {@link AgentplaneClient.runs.wait} answers it).
     */
    respond(body: RespondBody, options?: CallOptions): Promise<RespondResult>;
  };
  events: {
    /** GET /api/events/stream, reconnecting and resuming after the last id: see {@link EventStreamOptions}. */
    stream(options?: EventStreamOptions): AsyncGenerator<StreamedEvent>;
  };
}

/**
 * A client of an agentplane API. Uses only fetch, ReadableStream and TextDecoder: it runs in
 * browsers and in Node alike.
 */
export function createClient(options: ClientOptions): AgentplaneClient {
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey !== undefined) headers[options.apiKeyHeader ?? 'X-Api-Key'] = options.apiKey;
  if (options.token !== undefined) headers.Authorization = `Bearer ${options.token}`;
  const client = createFetchClient<paths>({ baseUrl: options.baseUrl, headers, ...(options.fetch ? { fetch: options.fetch } : {}) });

  const signalOf = (call: CallOptions | undefined) => (call?.signal ? { signal: call.signal } : {});
  return Object.assign(client, {
    runs: {
      start: (body: StartRunBody, call: StartOptions = {}): Promise<RunTicket> =>
        startWithRetries(call, (headers) => client.POST('/api/runs', { body, headers, ...signalOf(call) })),
      wait: (body: StartRunWaitBody, call: StartOptions = {}): Promise<WaitedRun> =>
        startWithRetries(call, (headers) => client.POST('/api/runs/wait', { body, headers, ...signalOf(call) })),
      stream: (body: StartRunBody, call?: StartOptions & { retryMs?: number }) => startRunStream(client, body, call),
    },
    approvals: {
      async respond(body: RespondBody, call?: CallOptions): Promise<RespondResult> {
        const { data, error, response } = await client.POST('/api/approval/respond', { body, ...signalOf(call) });
        if (error !== undefined || !data) throw ApiError.fromResponse(response, error);
        return data;
      },
    },
    events: {
      stream: (streamOptions?: EventStreamOptions) => streamEvents(client, streamOptions),
    },
  });
}
