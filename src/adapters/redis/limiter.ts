import type { RedisClient } from './connection.js';
import { RateLimiterMemory, RateLimiterRedis, RLWrapperTimeouts } from 'rate-limiter-flexible';
import type { LimitPolicy, Limiter, LimiterFactory, LimitResult } from '../../ports/limiter.js';
import { consumeWith, memoryLimiterOptions } from '../shared/rate-limiter.js';

export interface RedisLimiterOptions {
  /** A client created by `src/main`; the limiter never closes it. */
  client: RedisClient;
  /** `SERVICE_KEY_PREFIX`: every counter key starts with `<prefix>:ratelimit:<policy>:`. */
  prefix: string;
  /**
   * Longest wait for Redis before the in-memory insurance answers, in milliseconds. Bounds the
   * latency a hung Redis adds, whatever the client's own retry and offline-queue settings.
   * @defaultValue 500
   */
  timeoutMs?: number;
}

/**
 * Counts in Redis so a limit holds across replicas (rate-limiter-flexible's atomic INCR+TTL
 * script). When Redis is not ready, errors, or is slower than `timeoutMs`, a per-process
 * memory limiter with the same policy answers: requests are served, limits hold per replica.
 */
export class RedisLimiter implements Limiter {
  private readonly limiter: RLWrapperTimeouts;

  constructor(
    readonly policy: LimitPolicy,
    options: RedisLimiterOptions,
  ) {
    const redis = new RateLimiterRedis({
      // ioredis is the library's default client type: no useRedisPackage flag.
      storeClient: options.client,
      keyPrefix: `${options.prefix}:ratelimit:${policy.name}`,
      points: policy.points,
      duration: policy.durationSec,
      rejectIfRedisNotReady: true,
    });
    // The insurance sits on the timeout wrapper only: an error and a timeout of the same call
    // then fall back once, where insurance on both layers would count that request twice.
    this.limiter = new RLWrapperTimeouts({
      limiter: redis,
      timeoutMs: options.timeoutMs ?? 500,
      insuranceLimiter: new RateLimiterMemory(memoryLimiterOptions(policy)),
    });
  }

  consume(key: string, points = 1): Promise<LimitResult> {
    return consumeWith(this.limiter, this.policy, key, points);
  }
}

export function redisLimiterFactory(options: RedisLimiterOptions): LimiterFactory {
  return (policy) => new RedisLimiter(policy, options);
}
