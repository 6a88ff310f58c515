import { ApiError } from '../../src/client/index.js';

/**
 * An error answer of the API (the typed client's {@link ApiError}) whose message is the
 * sentence the console shows: what happened in words, then the server's reason.
 */
export class ConsoleApiError extends ApiError {
  /** The server's own message. */
  readonly detail: string;
  /** Retry-After of a 429, in seconds. */
  readonly retryAfterSec: number | undefined;

  constructor(response: Response, body: unknown) {
    const base = ApiError.fromResponse(response, body);
    const retry = Number(response.headers.get('Retry-After'));
    const retryAfterSec = Number.isFinite(retry) && retry > 0 ? retry : undefined;
    super(base.status, base.code, readable(base.status, base.code, base.message, retryAfterSec), base.requestId);
    this.detail = base.message;
    this.retryAfterSec = retryAfterSec;
  }
}

/** The sentence shown for an error answer. */
export function readable(status: number, code: string, detail: string, retryAfterSec?: number): string {
  const reason = detail ? ` ${detail}` : '';
  switch (status) {
    case 401:
      return `Your credential was not accepted (401): sign in again.${reason}`;
    case 403:
      return `Your role does not allow this (403).${reason}`;
    case 404:
      return `Not found (404): it does not exist, or no longer does.${reason}`;
    case 409:
      return `Not possible right now (409):${reason || ' it conflicts with the current state.'}`;
    case 412:
      return 'The state changed since you opened it (412): nothing was saved. Review what changed below.';
    case 429:
      return `Too many requests (429): try again${retryAfterSec ? ` in ${retryAfterSec} s` : ' shortly'}.${reason}`;
    default:
      return `${detail || 'The request failed.'} (${status} ${code})`;
  }
}

/** The message of anything thrown, for display; an error of the client gets its readable sentence. */
export function messageOf(error: unknown): string {
  if (error instanceof ApiError && !(error instanceof ConsoleApiError)) return readable(error.status, error.code, error.message);
  if (error instanceof TypeError) return `The API could not be reached: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

export { ApiError };
