import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import { AppError, type ErrorCode } from '../domain/errors.js';

const STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  invalid_cron: 400,
  unknown_agent: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  gone: 410,
  method_not_allowed: 405,
  conflict: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
};

const CODE_BY_STATUS = new Map<number, ErrorCode>([
  [400, 'bad_request'],
  [401, 'unauthorized'],
  [403, 'forbidden'],
  [404, 'not_found'],
  [405, 'method_not_allowed'],
  [409, 'conflict'],
  [412, 'precondition_failed'],
  [413, 'payload_too_large'],
  [415, 'unsupported_media_type'],
  [429, 'rate_limited'],
  [503, 'unavailable'],
]);

export function statusOf(code: ErrorCode): number {
  return STATUS[code];
}

export interface ErrorBody {
  error: { code: string; message: string };
  /** The message again, on routes declared with `errorDetail` (LangGraph clients read it). */
  detail?: string;
}

/**
 * Turns anything thrown into an AppError. Errors from Koa and its body parser carry an HTTP
 * `status` and `expose`; anything else is an internal error whose message stays private (the
 * adapters raise AppError `unavailable` themselves when their backend is unreachable).
 */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const http = error as { status?: number; statusCode?: number; expose?: boolean; message?: string; type?: string };
  const status = http.status ?? http.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code = CODE_BY_STATUS.get(status) ?? 'bad_request';
    const message =
      code === 'payload_too_large'
        ? 'The request body is larger than the limit.'
        : http.type === 'entity.parse.failed' || error instanceof SyntaxError
          ? `The request body is not valid JSON (${http.message ?? 'parse error'}).`
          : http.expose && http.message
            ? http.message
            : 'The request is malformed.';
    return new AppError(code, message, { cause: error });
  }
  // zlib (Z_DATA_ERROR, …) and brotli (ERR__ERROR_FORMAT_…) refusing the body's bytes.
  if (/^(Z_|ERR__ERROR_)/.test((error as { code?: string } | null)?.code ?? '')) {
    return new AppError('bad_request', 'The request body does not match its Content-Encoding.', { cause: error });
  }
  return new AppError('internal', 'An internal error occurred.', { cause: error, expose: false });
}

/**
 * The one error renderer: the contract's JSON body, status and extra headers; with `detail`
 * beside `error` on a route declared with `errorDetail`.
 */
export function renderError(ctx: Context, appError: AppError): void {
  ctx.status = statusOf(appError.code);
  for (const [name, value] of Object.entries(appError.headers)) ctx.set(name, value);
  const message = appError.expose ? appError.message : 'An internal error occurred.';
  const body: ErrorBody = { error: { code: appError.code, message }, ...(ctx.state.errorDetail === true ? { detail: message } : {}) };
  ctx.body = body;
}

const CLIENT_ERRORS: Record<string, string> = {
  HPE_HEADER_OVERFLOW: 'The request line or headers are larger than the server accepts (16 KiB).',
  HPE_URI_TOO_LONG: 'The request URI is longer than the server accepts.',
  ERR_HTTP_REQUEST_TIMEOUT: 'The request did not arrive in time (SERVICE_REQUEST_TIMEOUT_MS); send it again.',
};

/**
 * The raw HTTP answer for a request Node's parser refused before Koa saw it (headers too
 * large, malformed HTTP: 400; not received within the request timeout: 408), in the
 * contract's JSON shape, with a request id, instead of Node's bare status line.
 */
export function clientErrorResponse(parserCode: string | undefined): string {
  const message = CLIENT_ERRORS[parserCode ?? ''] ?? 'The request is not valid HTTP.';
  const body = JSON.stringify({ error: { code: 'bad_request', message } } satisfies ErrorBody);
  const status = parserCode === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request';
  return (
    `HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `X-Request-Id: ${randomUUID()}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}
