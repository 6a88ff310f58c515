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
export function principalFromClaims(payload: JWTPayload, options: JwtOptions): Principal {
  requireExpiry(payload, options.trustedIssuers ?? []);
  return {
    subject: subjectOf(payload),
    tenant: tenantOf(payload, options.tenantClaim ?? 'tenant_id', options.defaultTenant),
    role: roleOf(payload.roles),
    kind: 'jwt',
  };
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
