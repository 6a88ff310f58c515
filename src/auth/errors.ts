import { AppError } from '../domain/errors.js';

/**
 * A 401 carrying the challenge for the configured scheme. `detail` goes into the error's cause
 * (logged with the request id), never into the response; it must not contain the credential.
 */
export function unauthorized(challenge: string, message: string, detail?: string): AppError {
  return new AppError('unauthorized', message, {
    headers: { 'WWW-Authenticate': challenge },
    cause: detail === undefined ? undefined : new Error(detail),
  });
}

/**
 * Reduces a verification error to its class name, code and message. jose attaches the
 * decoded claims to some errors (`payload`); dropping them keeps logs free of token content.
 */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? `${code}: ${error.message}` : `${error.name}: ${error.message}`;
}
