import { ApiError } from './errors.js';

/** Options of the helpers that start a run (`runs.start`, `runs.wait`, `runs.stream`). */
export interface StartOptions {
  signal?: AbortSignal;
  /**
   * The start's `Idempotency-Key`: the same on each of this call's tries, so a retry answers
   * the run an earlier try created instead of starting another. Pass your own to carry one
   * start across calls (your own retries, a restarted process). @defaultValue a new UUID per call
   */
  idempotencyKey?: string;
  /** Tries after the first when the answer is 429 or 5xx, or none came (a network error). @defaultValue 3 */
  retries?: number;
}

/** The longest pause between two tries, whatever `Retry-After` says (ms). */
const MAX_PAUSE_MS = 10_000;

/** An openapi-fetch answer, as the raw methods resolve. */
interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * Sends a start with its Idempotency-Key and tries again, with the same key, while the answer
 * is one a retry can change (429, 5xx) or no answer came: with the key, a try that reached the
 * server is answered again, never started twice. Pauses `Retry-After` seconds when the answer
 * has it, else 0.5 s doubling. Resolves with the first answer that is not retried; an abort
 * ends it with the abort's error.
 */
export async function startWithRetries<T>(options: StartOptions, send: (headers: Record<string, string>) => Promise<Answer<T>>): Promise<NonNullable<T>> {
  const headers = { 'Idempotency-Key': options.idempotencyKey ?? globalThis.crypto.randomUUID() };
  const retries = options.retries ?? 3;
  for (let attempt = 0; ; attempt += 1) {
    let failure: unknown;
    let pauseMs = Math.min(500 * 2 ** attempt, MAX_PAUSE_MS);
    try {
      const { data, error, response } = await send(headers);
      if (error === undefined && response.ok && data !== undefined && data !== null) return data;
      failure = ApiError.fromResponse(response, error);
      const retryAfter = Number(response.headers.get('retry-after'));
      if (response.headers.has('retry-after') && Number.isFinite(retryAfter)) pauseMs = Math.min(retryAfter * 1000, MAX_PAUSE_MS);
      if (!(failure as ApiError).retryable) throw failure;
    } catch (error) {
      // A refused answer, or an abort: final. Anything else thrown by fetch means no answer came.
      if (error instanceof ApiError && !error.retryable) throw error;
      if (options.signal?.aborted) throw error;
      failure = error;
    }
    if (attempt >= retries) throw failure;
    await pause(pauseMs, options.signal);
  }
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      signal?.removeEventListener('abort', aborted);
      resolve();
    }
    function aborted(): void {
      clearTimeout(timer);
      reject(signal!.reason);
    }
    signal?.addEventListener('abort', aborted, { once: true });
  });
}
