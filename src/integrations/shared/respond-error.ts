import type { Context } from 'koa';
import { AppError } from '../../domain/errors.js';
import { renderError, toAppError } from '../../http/errors.js';

/**
 * Answers an integration endpoint's request through the app's one error renderer (the
 * API's error body `{"error":{"code","message"}}`). Integrations are mounted on apps other than
 * agentplane's, whose error middleware may render differently, so they render their own errors.
 */
export function respondError(ctx: Context, error: unknown): void {
  const appError = toAppError(error);
  renderError(ctx, appError);
  // The rest of an oversized upload is not read; closing the connection discards it.
  if (appError.code === 'payload_too_large') ctx.set('Connection', 'close');
}

/** The 405 of an integration endpoint that accepts only POST. */
export function methodNotAllowed(): AppError {
  return new AppError('method_not_allowed', 'Only POST is allowed here.', { headers: { Allow: 'POST' } });
}

/** The 401 of a failed secret or signature check. */
export function unauthorized(message: string): AppError {
  return new AppError('unauthorized', message);
}
