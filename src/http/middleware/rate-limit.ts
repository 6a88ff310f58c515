import { createHash } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import type { Rate } from '../../config.js';
import { AppError } from '../../domain/errors.js';
import type { Principal } from '../../domain/types.js';
import type { LimiterFactory, Limiter, LimitResult } from '../../ports/limiter.js';
import type { AppDeps } from '../deps.js';

/** Counts refusals by limiter (`agentplane_rate_limited_total{limiter}`). */
export interface RejectionCounter {
  inc(labels: { limiter: string }): void;
}

/** The configured rates; each is off when null. */
export interface LimitRates {
  rateLimit: Rate | null;
  quotaPerKey: Rate | null;
  quotaPerTenant: Rate | null;
}

/** The router stages of the limits, built per app from its deps (for the metric). */
export interface LimitStages {
  beforeAuth: (deps: AppDeps) => Middleware[];
  afterAuth: (deps: AppDeps) => Middleware[];
}

/**
 * The global limit (before authentication) and the quotas (after it) for the configured rates,
 * on the limiters `limiterFor` builds (Redis when there is one, else memory). The limiters are
 * built once here, so apps sharing these stages also share their memory counters.
 */
export function limitStages(rates: LimitRates, limiterFor: LimiterFactory): LimitStages {
  const global = rates.rateLimit && limiterFor({ name: 'global', ...rates.rateLimit });
  const key = rates.quotaPerKey && limiterFor({ name: 'key', ...rates.quotaPerKey });
  const tenant = rates.quotaPerTenant && limiterFor({ name: 'tenant', ...rates.quotaPerTenant });
  return {
    beforeAuth: (deps) => (global ? [globalRateLimit(global, deps.metrics.rateLimited)] : []),
    afterAuth: (deps) => (key || tenant ? [quotas({ key, tenant }, deps.metrics.rateLimited)] : []),
  };
}

/** Counts every request against its client address (`ctx.ip`: X-Forwarded-For when trusted). */
export function globalRateLimit(limiter: Limiter, rejected: RejectionCounter): Middleware {
  return async (ctx, next) => {
    record(ctx, await limiter.consume(ctx.ip || 'unknown'), rejected);
    await next();
  };
}

/**
 * Quotas of authenticated callers: per key (API key digest or JWT subject, within its tenant)
 * and per tenant. The anonymous principal of SERVICE_AUTH=none has none.
 */
export function quotas(limiters: { key?: Limiter | null; tenant?: Limiter | null }, rejected: RejectionCounter): Middleware {
  return async (ctx, next) => {
    const principal = ctx.state.principal as Principal | undefined;
    if (principal && principal.kind !== 'anonymous') {
      if (limiters.key) record(ctx, await limiters.key.consume(quotaKey(principal)), rejected);
      if (limiters.tenant) record(ctx, await limiters.tenant.consume(principal.tenant), rejected);
    }
    await next();
  };
}

/**
 * The bucket of a caller's quota: tenant, credential kind and subject encoded unambiguously
 * (a JSON array: no choice of names makes two callers share a bucket), then hashed, so a long
 * subject never becomes a long limiter key.
 */
export function quotaKey(principal: Pick<Principal, 'tenant' | 'kind' | 'subject'>): string {
  return createHash('sha256').update(JSON.stringify([principal.tenant, principal.kind, principal.subject])).digest('base64url');
}

/**
 * Adds a result to the request's limits and writes the headers of the limiter closest to its
 * limit; a refusal is a 429 with those headers and Retry-After.
 */
function record(ctx: Context, result: LimitResult, rejected: RejectionCounter): void {
  const results = [...((ctx.state.rateLimits as LimitResult[] | undefined) ?? []), result];
  ctx.state.rateLimits = results;
  if (!result.allowed) {
    rejected.inc({ limiter: result.policy.name });
    const retryAfter = Math.max(1, Math.ceil(result.resetMs / 1000));
    throw new AppError('rate_limited', `Too many requests (${result.policy.name} limit); retry in ${retryAfter} s.`, {
      headers: { ...rateLimitHeaders(result), 'Retry-After': String(retryAfter) },
    });
  }
  ctx.set(rateLimitHeaders(closest(results)));
}

/** The result with the smallest share of its points left; the earlier one on a tie. */
function closest(results: readonly LimitResult[]): LimitResult {
  return results.reduce((best, r) => (r.remaining / r.policy.points < best.remaining / best.policy.points ? r : best));
}

/** `RateLimit-Policy` and `RateLimit` as in the IETF RateLimit header fields draft. */
function rateLimitHeaders(result: LimitResult): Record<string, string> {
  const { name, points, durationSec } = result.policy;
  return {
    'RateLimit-Policy': `"${name}";q=${points};w=${durationSec}`,
    RateLimit: `"${name}";r=${result.remaining};t=${Math.ceil(result.resetMs / 1000)}`,
  };
}
