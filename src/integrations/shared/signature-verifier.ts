import type { IncomingHttpHeaders } from 'node:http';

/** Outcome of a payload signature check; `reason` is safe to show to the sender. */
export type SignatureCheck = { ok: true } | { ok: false; reason: string };

/**
 * Verifies a request's signature over the exact bytes received. The endpoint answers 401
 * with the reason and calls no handler when the check fails.
 */
export type SignatureVerifier = (rawBody: Buffer, headers: IncomingHttpHeaders) => SignatureCheck;

/** The single value of a header, or undefined when it is absent or repeated. */
export function singleHeader(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** Replay window of the signature schemes that sign a timestamp. */
export interface TimestampToleranceOptions {
  /** Largest accepted distance between the signed timestamp and now, either way. @defaultValue 300 */
  toleranceSec?: number;
  /** Milliseconds since the epoch. @defaultValue Date.now */
  now?: () => number;
}

/**
 * Whether a signed timestamp (decimal seconds since the epoch) lies within the window, so a
 * captured request cannot be replayed later than that.
 */
export function isFreshTimestamp(timestamp: string, options: TimestampToleranceOptions): boolean {
  const nowMs = (options.now ?? Date.now)();
  return /^\d{1,12}$/.test(timestamp) && Math.abs(nowMs / 1000 - Number(timestamp)) <= (options.toleranceSec ?? 300);
}
