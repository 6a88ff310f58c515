import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { LimitPolicy, LimitResult } from '../../ports/limiter.js';

/**
 * What the memory and Redis limiters share: both are rate-limiter-flexible limiters (the
 * Redis one with a memory limiter as its insurance), read the same way.
 */

/** rate-limiter-flexible options of an in-memory limiter for a policy. */
export function memoryLimiterOptions(policy: LimitPolicy): { points: number; duration: number; keyPrefix: string } {
  return { points: policy.points, duration: policy.durationSec, keyPrefix: policy.name };
}

type Consumable = Pick<RateLimiterAbstract, 'consume'>;

/**
 * Consumes on a rate-limiter-flexible limiter and reports the outcome as a {@link LimitResult}.
 * The library rejects with a RateLimiterRes when points run out; that is an answer, not an error.
 */
export async function consumeWith(limiter: Consumable, policy: LimitPolicy, key: string, points: number): Promise<LimitResult> {
  try {
    return resultOf(policy, true, await limiter.consume(key, points));
  } catch (rejection) {
    if (rejection instanceof RateLimiterRes) return resultOf(policy, false, rejection);
    throw rejection;
  }
}

function resultOf(policy: LimitPolicy, allowed: boolean, res: RateLimiterRes): LimitResult {
  return {
    policy,
    allowed,
    remaining: allowed ? Math.max(res.remainingPoints, 0) : 0,
    resetMs: Math.max(res.msBeforeNext, 0),
  };
}
