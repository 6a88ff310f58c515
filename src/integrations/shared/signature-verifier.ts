import type { IncomingHttpHeaders } from 'node:http';

/**
 * Outcome of a payload signature check; `reason` is safe to show to the sender. A scheme whose
 * deliveries carry an id names it (`delivery`), with how long a replay of it could pass the check,
 * so the endpoint handles each delivery once.
 */
export type SignatureCheck = { ok: true; delivery?: { id: string; replayWindowMs: number } } | { ok: false; reason: string };

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
  /** Oldest accepted signed timestamp, in seconds before now. @defaultValue 300 */
  toleranceSec?: number;
  /** Clock skew allowed for a signed timestamp ahead of now, in seconds. @defaultValue 30 */
  futureSkewSec?: number;
  /** Milliseconds since the epoch. @defaultValue Date.now */
  now?: () => number;
}

export const DEFAULT_TIMESTAMP_TOLERANCE_SEC = 300;
export const DEFAULT_FUTURE_SKEW_SEC = 30;

/**
 * Whether a signed timestamp (decimal seconds since the epoch) lies within the window: at most
 * `toleranceSec` old, so a captured request cannot be replayed later than that, and at most a
 * clock skew ahead (a timestamp far ahead would stretch the replay window).
 */
export function isFreshTimestamp(timestamp: string, options: TimestampToleranceOptions): boolean {
  if (!/^\d{1,12}$/.test(timestamp)) return false;
  const age = (options.now ?? Date.now)() / 1000 - Number(timestamp);
  return age <= (options.toleranceSec ?? DEFAULT_TIMESTAMP_TOLERANCE_SEC) && -age <= (options.futureSkewSec ?? DEFAULT_FUTURE_SKEW_SEC);
}

/** How long a delivery id is remembered after a timestamped check: the window both ways, plus a margin. */
export function replayWindowMs(options: TimestampToleranceOptions): number {
  return ((options.toleranceSec ?? DEFAULT_TIMESTAMP_TOLERANCE_SEC) + (options.futureSkewSec ?? DEFAULT_FUTURE_SKEW_SEC) + 60) * 1000;
}
