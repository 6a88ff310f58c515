/**
 * The one error type of agentplane. Domain, runtime and adapters throw it with a stable
 * `code`; only `src/http/` maps a code to an HTTP status and renders it.
 */
export type ErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'gone'
  | 'method_not_allowed'
  | 'conflict'
  | 'precondition_failed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal'
  | 'unavailable'
  | 'invalid_cron'
  | 'unknown_agent'
  | 'idempotency_key_reused';

export interface AppErrorOptions {
  /** Whether the message may be shown to a client. @defaultValue true except for `internal` */
  expose?: boolean;
  cause?: unknown;
  /** Extra response headers the renderer adds (e.g. `Allow`, `Retry-After`). */
  headers?: Record<string, string>;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly expose: boolean;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.expose = options.expose ?? code !== 'internal';
    this.headers = options.headers ?? {};
  }
}

export const notFound = (what: string): AppError => new AppError('not_found', `${what} was not found.`);
/**
 * A run a request followed (a wait, a run stream) no longer exists: its session was removed
 * under it (deleted, expired, or lost by the storage), so no event will ever end it.
 */
export const runGone = (runId: string): AppError =>
  new AppError('gone', `The run ${runId} no longer exists: its session was removed (deleted, expired, or lost by the storage).`);
export const badRequest = (message: string): AppError => new AppError('bad_request', message);
export const conflict = (message: string): AppError => new AppError('conflict', message);

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

/** An Idempotency-Key sent again with other run fields than its first start (nothing is written). */
export const idempotencyKeyReused = (): AppError =>
  new AppError('idempotency_key_reused', 'This Idempotency-Key was used for a start with other fields; send a new key for a new start.');

/** A replayed Idempotency-Key whose run was removed since (its session deleted, or dropped by retention). */
export const idempotentRunGone = (): AppError =>
  conflict('The run this Idempotency-Key started no longer exists (its session was deleted, or it was dropped by retention).');

/** A write that would take a session's state past SERVICE_MAX_STATE_BYTES (nothing is written). */
export const stateTooLarge = (): AppError =>
  new AppError('payload_too_large', 'The merged state would be larger than the state size limit (SERVICE_MAX_STATE_BYTES).');

/** A write that would take a session's state past SERVICE_MAX_STATE_KEYS (nothing is written). */
export const stateTooManyKeys = (): AppError =>
  new AppError('bad_request', 'The merged state would have more keys than the limit (SERVICE_MAX_STATE_KEYS).');

/** An infrastructure failure (storage unreachable): the queue retries the job, the run is not ended. */
export function isUnavailable(error: unknown): boolean {
  return error instanceof AppError && error.code === 'unavailable';
}

/** What a "try" operation answers: its value, or the refusal it expected (a race lost: the run ended, the approval was decided) as a value. */
export type Tried<T, C extends ErrorCode> = { ok: true; value: T } | { ok: false; error: AppError & { code: C } };

/**
 * Awaits `work`, answering an AppError of one of `codes` as a value instead of throwing it:
 * the races callers expect travel as values; faults (any other error) still throw.
 */
export async function tryExpected<T, C extends ErrorCode>(work: Promise<T>, ...codes: C[]): Promise<Tried<T, C>> {
  try {
    return { ok: true, value: await work };
  } catch (error) {
    if (error instanceof AppError && (codes as readonly ErrorCode[]).includes(error.code)) return { ok: false, error: error as AppError & { code: C } };
    throw error;
  }
}
