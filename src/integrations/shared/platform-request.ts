import { abortableSleep } from './abortable-sleep.js';

/** One outbound call to a chat platform's HTTP API. */
export interface PlatformRequest {
  /** What the call is (`chat.postMessage`), for errors and logs; never holds a secret. */
  label: string;
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  url: string;
  headers?: Record<string, string>;
  /** Sent as `application/json`. */
  json?: unknown;
}

/** The platform's answer; `body` is the parsed JSON, the text when not JSON, or null when empty. */
export interface PlatformResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

export interface PlatformCallOptions {
  fetch: typeof fetch;
  /** Upper bound of one attempt, connection to last byte. */
  timeoutMs: number;
  /** Aborts the call (and any wait before a retry) when the adapter stops. */
  signal?: AbortSignal;
  /** Attempts in all when the platform answers 429. @defaultValue 4 */
  maxAttempts?: number;
  /** A 429 asking to wait longer than this is not retried. @defaultValue 30000 */
  maxRetryWaitMs?: number;
  /** How long the platform asks to wait before a retry, or undefined when it is not a 429. */
  retryAfterMs(response: PlatformResponse): number | undefined;
}

/**
 * Makes the call and, while the platform answers 429, waits what it asks and tries again.
 * Returns the last response whatever its status: each adapter turns its platform's error
 * shape into an error. Network failures and timeouts reject (the URL is never part of the
 * message, since Telegram puts the bot token in it).
 */
export async function callPlatform(request: PlatformRequest, options: PlatformCallOptions): Promise<PlatformResponse> {
  const maxAttempts = options.maxAttempts ?? 4;
  const maxWaitMs = options.maxRetryWaitMs ?? 30_000;
  for (let attempt = 1; ; attempt++) {
    const response = await attemptOnce(request, options);
    const waitMs = options.retryAfterMs(response);
    if (waitMs === undefined || attempt >= maxAttempts || waitMs > maxWaitMs || options.signal?.aborted) {
      return response;
    }
    await abortableSleep(waitMs, options.signal);
  }
}

async function attemptOnce(request: PlatformRequest, options: PlatformCallOptions): Promise<PlatformResponse> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
  const onAbort = (): void => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  try {
    const response = await options.fetch(request.url, {
      method: request.method,
      headers: {
        ...(request.json === undefined ? {} : { 'Content-Type': 'application/json; charset=utf-8' }),
        ...request.headers,
      },
      body: request.json === undefined ? undefined : JSON.stringify(request.json),
      signal: controller.signal,
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: parseBody(text) };
  } catch (error) {
    // fetch rejects with the abort reason, so a timeout or a stop is the cause here too.
    throw new Error(`${request.label} did not get an answer`, { cause: error });
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}

function parseBody(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The `Retry-After` header in milliseconds (seconds form only), or undefined. */
export function retryAfterHeaderMs(headers: Headers): number | undefined {
  const seconds = Number(headers.get('retry-after'));
  return headers.has('retry-after') && Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

/**
 * A platform refused a call. `platformCode` is the platform's own code (Slack's `error`,
 * Discord's `code`, Telegram's `error_code`) so logs show what the platform said.
 */
export class PlatformError extends Error {
  constructor(
    readonly call: string,
    readonly status: number,
    readonly platformCode: string | number | undefined,
    detail: string,
  ) {
    super(`${call} was refused (HTTP ${status}${platformCode === undefined ? '' : `, ${platformCode}`}): ${detail}`);
    this.name = 'PlatformError';
  }
}
