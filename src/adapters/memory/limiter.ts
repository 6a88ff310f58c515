import { RateLimiterMemory } from 'rate-limiter-flexible';
import type { LimitPolicy, Limiter, LimiterFactory, LimitResult } from '../../ports/limiter.js';
import { consumeWith, memoryLimiterOptions } from '../shared/rate-limiter.js';

/** Counts in this process only: the embedded mode's limiter. */
export class MemoryLimiter implements Limiter {
  private readonly limiter: RateLimiterMemory;

  constructor(readonly policy: LimitPolicy) {
    this.limiter = new RateLimiterMemory(memoryLimiterOptions(policy));
  }

  consume(key: string, points = 1): Promise<LimitResult> {
    return consumeWith(this.limiter, this.policy, key, points);
  }
}

export const memoryLimiterFactory: LimiterFactory = (policy) => new MemoryLimiter(policy);
