import type { JWTPayload } from 'jose';
import { ID_PATTERN, ROLE_RANK, type Principal, type Role } from '../domain/types.js';
import type { JwtOptions } from './options.js';

/** A verified token whose claims cannot make a principal; the message is safe to show. */
export class ClaimError extends Error {
  override readonly name = 'ClaimError';
}

/**
 * Turns the claims of a token whose signature, `iss`, `aud`, `exp` and `nbf` jose has already
 * checked into a principal. Fails closed: no `exp` from an untrusted issuer, no `sub`, a missing
 * tenant without a default, a tenant that is not a valid name, or a malformed `roles` claim.
 */
export function principalFromClaims(payload: JWTPayload, options: JwtOptions, nowSec = Date.now() / 1000): Principal {
  requireExpiry(payload, options.trustedIssuers ?? []);
  checkLifetime(payload, options.maxAgeSec ?? DEFAULT_MAX_AGE_SEC, options.clockToleranceSec ?? DEFAULT_CLOCK_TOLERANCE_SEC, nowSec);
  return {
    subject: subjectOf(payload),
    tenant: tenantOf(payload, options.tenantClaim ?? 'tenant_id', options.defaultTenant),
    role: roleOf(payload.roles),
    kind: 'jwt',
  };
}

/** `SERVICE_JWT_MAX_AGE`'s default: a day. */
export const DEFAULT_MAX_AGE_SEC = 86_400;
export const DEFAULT_CLOCK_TOLERANCE_SEC = 30;

/**
 * Bounds how long a token works: never issued in the future (beyond the clock skew), and, with
 * a maximum age, no lifetime (`exp - iat`, or `exp - now` without `iat`) and no age past it. A
 * token with neither `exp` nor `iat` (a trusted issuer's) cannot be bounded, so it is refused.
 */
function checkLifetime(payload: JWTPayload, maxAge: number, tolerance: number, now: number): void {
  const { iat, exp } = payload;
  if (iat !== undefined && iat > now + tolerance) throw new ClaimError('The bearer token was issued in the future.');
  if (maxAge === 0) return;
  if (iat !== undefined && now - iat > maxAge + tolerance) {
    throw new ClaimError('The bearer token is older than the maximum token age.');
  }
  if (exp !== undefined && exp - (iat ?? now) > maxAge + tolerance) {
    throw new ClaimError('The bearer token lives longer than the maximum token age.');
  }
  if (exp === undefined && iat === undefined) {
    throw new ClaimError('The bearer token has neither an expiry nor an issue time.');
  }
}

function requireExpiry(payload: JWTPayload, trustedIssuers: readonly string[]): void {
  if (payload.exp !== undefined) return;
  if (typeof payload.iss === 'string' && trustedIssuers.includes(payload.iss)) return;
  throw new ClaimError('The bearer token has no expiry.');
}

function subjectOf(payload: JWTPayload): string {
  if (typeof payload.sub !== 'string' || payload.sub === '') throw new ClaimError('The bearer token names no subject.');
  return payload.sub;
}

function tenantOf(payload: JWTPayload, claim: string, fallback: string | undefined): string {
  const tenant = payload[claim];
  if (tenant === undefined) {
    if (fallback === undefined) throw new ClaimError('The bearer token names no tenant.');
    return fallback;
  }
  if (typeof tenant !== 'string' || !ID_PATTERN.test(tenant)) {
    throw new ClaimError('The bearer token names an invalid tenant.');
  }
  return tenant;
}

/** `roles` is a role name or a list of them; the highest known one counts, none means viewer. */
export function roleOf(claim: unknown): Role {
  if (claim === undefined) return 'viewer';
  const names = typeof claim === 'string' ? [claim] : claim;
  if (!Array.isArray(names) || !names.every((name) => typeof name === 'string')) {
    throw new ClaimError('The bearer token has a malformed roles claim.');
  }
  let role: Role = 'viewer';
  for (const name of names as string[]) {
    if (Object.hasOwn(ROLE_RANK, name) && ROLE_RANK[name as Role] > ROLE_RANK[role]) role = name as Role;
  }
  return role;
}
