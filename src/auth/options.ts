import type { Config } from '../config.js';
import type { ApiKeyEntry } from '../domain/api-key-entries.js';

export type AuthMode = 'none' | 'jwt' | 'apikey';

/** How bearer tokens are verified. Built from `SERVICE_JWT_*`, or written in code. */
export interface JwtOptions {
  /** HS256 shared secret (`SERVICE_JWT_SECRET`); enables HS256. At least 32 bytes. */
  secret?: string;
  /** Key-set URL (`SERVICE_JWT_JWKS_URL`); enables RS256 with keys selected by `kid`. */
  jwksUrl?: string;
  /** RSA public key, PEM SPKI (`SERVICE_JWT_PUBLIC_KEY`); enables RS256. Excludes `jwksUrl`. */
  publicKeyPem?: string;
  /** Expected `iss`, checked when set. */
  issuer?: string;
  /** Expected `aud`, checked when set. */
  audience?: string;
  /** Issuers whose tokens may omit `exp`. @defaultValue [] */
  trustedIssuers?: readonly string[];
  /** Claim holding the tenant name. @defaultValue `tenant_id` */
  tenantClaim?: string;
  /** Tenant of a token without the tenant claim; unset means such tokens are rejected. */
  defaultTenant?: string;
  /** Allowed clock skew for `exp`, `nbf` and `iat`, in seconds. @defaultValue 30 */
  clockToleranceSec?: number;
  /**
   * The longest a token may live (`exp - iat`, or `exp - now` without `iat`) and the oldest
   * `iat` accepted, in seconds (`SERVICE_JWT_MAX_AGE`); 0 means no bound. @defaultValue 86400
   */
  maxAgeSec?: number;
  /** Timeout of one key-set fetch, in milliseconds. @defaultValue 5000 */
  jwksTimeoutMs?: number;
  /**
   * Minimum time between a successful key-set fetch and a refetch caused by an unknown `kid`,
   * in milliseconds; bounds how often forged `kid`s can make us fetch. @defaultValue 30000
   */
  jwksCooldownMs?: number;
  /** Age after which cached keys are refetched, in milliseconds. @defaultValue 600000 */
  jwksCacheMaxAgeMs?: number;
  /** Largest key-set response read, in bytes; a bigger one counts as a failed fetch. @defaultValue 1 MiB */
  jwksMaxBytes?: number;
  /** The fetch used for the key set (tests and proxies). @defaultValue globalThis.fetch */
  fetch?: typeof fetch;
}

/** The programmatic authentication configuration; {@link authOptionsFromConfig} builds it from env. */
export interface AuthOptions {
  mode: AuthMode;
  jwt?: JwtOptions;
  /** Parsed API keys (digests only). Required non-empty when `mode` is `apikey`. */
  apiKeys?: readonly ApiKeyEntry[];
  /** Header carrying the API key. @defaultValue `X-Api-Key` */
  apiKeyHeader?: string;
}

export const DEFAULT_API_KEY_HEADER = 'X-Api-Key';

export function authOptionsFromConfig(config: Config): AuthOptions {
  return {
    mode: config.SERVICE_AUTH,
    apiKeys: config.apiKeys,
    apiKeyHeader: config.SERVICE_API_KEY_HEADER,
    jwt: {
      secret: config.SERVICE_JWT_SECRET,
      jwksUrl: config.SERVICE_JWT_JWKS_URL,
      publicKeyPem: config.SERVICE_JWT_PUBLIC_KEY,
      issuer: config.SERVICE_JWT_ISSUER,
      audience: config.SERVICE_JWT_AUDIENCE,
      trustedIssuers: config.SERVICE_JWT_TRUSTED_ISSUERS,
      tenantClaim: config.SERVICE_JWT_TENANT_CLAIM,
      defaultTenant: config.SERVICE_JWT_DEFAULT_TENANT,
      maxAgeSec: config.SERVICE_JWT_MAX_AGE / 1000,
    },
  };
}
