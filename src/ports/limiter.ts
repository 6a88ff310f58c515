/** A rate: at most `points` per window of `durationSec`, counted separately for each key. */
export interface LimitPolicy {
  /** Names the limiter in the `RateLimit` headers and the `limiter` metric label. */
  readonly name: string;
  readonly points: number;
  readonly durationSec: number;
}

/** The state of one key once a request has been counted. */
export interface LimitResult {
  readonly policy: LimitPolicy;
  /** False when the key has no points left: the request is refused. */
  readonly allowed: boolean;
  /** Points left in the current window; 0 when refused. */
  readonly remaining: number;
  /** Milliseconds until the window of this key resets. */
  readonly resetMs: number;
}

/**
 * Fixed-window counters per key. A refused consume resolves with `allowed: false`; a backend
 * outage never rejects (the Redis adapter answers from its in-memory insurance instead).
 */
export interface Limiter {
  readonly policy: LimitPolicy;
  /** Counts `points` (default 1) against `key`. */
  consume(key: string, points?: number): Promise<LimitResult>;
}

/** Builds the limiter of a policy; the limiters of one factory share its backend. */
export type LimiterFactory = (policy: LimitPolicy) => Limiter;
