import { errors, jwtVerify, type JWTPayload, type JWTVerifyOptions } from 'jose';
import { ConfigError } from '../config.js';
import { isAppError } from '../domain/errors.js';
import { ID_PATTERN, type Principal } from '../domain/types.js';
import type { Authenticator } from './authenticator.js';
import { describeError, unauthorized } from './errors.js';
import { ClaimError, DEFAULT_CLOCK_TOLERANCE_SEC, principalFromClaims } from './jwt-claims.js';
import { createJwtKeys, type JwtKeys } from './jwt-keys.js';
import type { JwtOptions } from './options.js';

/** Challenge without a credential (RFC 6750 §3: no error code then). */
export const BEARER_CHALLENGE = 'Bearer realm="agentplane"';
const INVALID_TOKEN_CHALLENGE = `${BEARER_CHALLENGE}, error="invalid_token"`;

/** RFC 6750 §2.1 `b64token` after the scheme. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/**
 * Verifies `Authorization: Bearer` JWTs (HS256 and/or RS256, as configured) and maps their claims
 * to a principal. Every setting is checked here, so a bad one stops the process at start.
 */
export function createJwtAuthenticator(options: JwtOptions): Authenticator {
  validateClaimSettings(options);
  const keys = createJwtKeys(options);
  const verifyOptions: JWTVerifyOptions = {
    algorithms: keys.algorithms,
    issuer: options.issuer,
    audience: options.audience,
    clockTolerance: options.clockToleranceSec ?? DEFAULT_CLOCK_TOLERANCE_SEC,
  };
  return Object.freeze({
    mode: 'jwt' as const,
    async authenticate(headers: { authorization?: string }): Promise<Principal> {
      const payload = await verify(bearerToken(headers.authorization), keys, verifyOptions);
      try {
        return principalFromClaims(payload, options);
      } catch (error) {
        if (error instanceof ClaimError) throw unauthorized(INVALID_TOKEN_CHALLENGE, error.message, describeError(error));
        throw error;
      }
    },
  });
}

function bearerToken(header: string | undefined): string {
  if (header === undefined || !/^Bearer(\s|$)/i.test(header)) {
    throw unauthorized(BEARER_CHALLENGE, 'A bearer token is required.');
  }
  const token = BEARER.exec(header)?.[1];
  if (token === undefined) throw unauthorized(INVALID_TOKEN_CHALLENGE, 'The bearer token is malformed.');
  return token;
}

async function verify(token: string, keys: JwtKeys, verifyOptions: JWTVerifyOptions): Promise<JWTPayload> {
  try {
    const { payload } = await jwtVerify(token, keys.getKey, verifyOptions);
    return payload;
  } catch (error) {
    if (isAppError(error)) throw error;
    const message =
      error instanceof errors.JWTExpired ? 'The bearer token has expired.' : 'The bearer token is invalid.';
    throw unauthorized(INVALID_TOKEN_CHALLENGE, message, describeError(error));
  }
}

function validateClaimSettings(options: JwtOptions): void {
  if (options.tenantClaim !== undefined && options.tenantClaim === '') {
    throw new ConfigError('SERVICE_JWT_TENANT_CLAIM', 'must not be empty');
  }
  if (options.defaultTenant !== undefined && !ID_PATTERN.test(options.defaultTenant)) {
    throw new ConfigError('SERVICE_JWT_DEFAULT_TENANT', `must match ${ID_PATTERN}`);
  }
  if ((options.trustedIssuers ?? []).some((issuer) => issuer === '')) {
    throw new ConfigError('SERVICE_JWT_TRUSTED_ISSUERS', 'must not contain empty entries');
  }
  const tolerance = options.clockToleranceSec ?? 0;
  if (!Number.isFinite(tolerance) || tolerance < 0) {
    throw new TypeError('jwt.clockToleranceSec must be a non-negative number of seconds');
  }
  const maxAge = options.maxAgeSec ?? 0;
  if (!Number.isFinite(maxAge) || maxAge < 0) {
    throw new ConfigError('SERVICE_JWT_MAX_AGE', 'must be a non-negative number of seconds (0 turns it off)');
  }
}
