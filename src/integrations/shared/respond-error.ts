import type { Context } from 'koa';
import { AppError, type ErrorCode } from '../../domain/errors.js';

const STATUS: Partial<Record<ErrorCode, number>> = {
  bad_request: 400,
  unauthorized: 401,
  method_not_allowed: 405,
  payload_too_large: 413,
  unavailable: 503,
};

/**
 * Answers an integration endpoint's request with the error body of CONTRACT.md,
 * `{"error":{"code","message"}}`. Integrations are mounted on apps other than agentplane's,
 * so they render their own few errors instead of relying on the app's error middleware.
 * Anything that is not an exposable AppError becomes a 500 without its message.
 */
export function respondError(ctx: Context, error: unknown): void {
  const known = error instanceof AppError && error.expose ? error : null;
  const code: ErrorCode = known?.code ?? 'internal';
  ctx.status = STATUS[code] ?? 500;
  for (const [name, value] of Object.entries(known?.headers ?? {})) ctx.set(name, value);
  if (code === 'payload_too_large') ctx.set('Connection', 'close');
  ctx.body = { error: { code, message: known?.message ?? 'Internal error.' } };
}

/** The 405 of an integration endpoint that accepts only POST. */
export function methodNotAllowed(): AppError {
  return new AppError('method_not_allowed', 'Only POST is allowed here.', { headers: { Allow: 'POST' } });
}

/** The 401 of a failed secret or signature check. */
export function unauthorized(message: string): AppError {
  return new AppError('unauthorized', message);
}
