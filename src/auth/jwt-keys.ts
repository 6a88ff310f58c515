import { createPublicKey, type KeyObject } from 'node:crypto';
import { createRemoteJWKSet, customFetch, errors, type FetchImplementation, type JWTVerifyGetKey } from 'jose';
import { ConfigError } from '../config.js';
import { AppError } from '../domain/errors.js';
import type { JwtOptions } from './options.js';

/** RFC 7518 §3.2: an HS256 key must be at least as long as the hash output. */
const MIN_SECRET_BYTES = 32;
const MIN_RSA_BITS = 2048;

export interface JwtKeys {
  /** The only algorithms a token may name: HS256 with a secret, RS256 with an RSA key. */
  readonly algorithms: string[];
  /**
   * Picks the key for the token's `alg` (and `kid`). HS256 only ever gets the shared secret and
   * RS256 only the RSA key, so a token cannot choose how its signature is checked.
   */
  readonly getKey: JWTVerifyGetKey;
}

type RsaKey = KeyObject | JWTVerifyGetKey;

/** Validates the key settings (throwing {@link ConfigError} at start) and builds the resolver. */
export function createJwtKeys(options: JwtOptions): JwtKeys {
  const secret = options.secret === undefined ? undefined : hmacSecret(options.secret);
  const rsa = rsaKey(options);
  const algorithms = [...(secret ? ['HS256'] : []), ...(rsa ? ['RS256'] : [])];
  if (algorithms.length === 0) {
    throw new ConfigError(
      'SERVICE_JWT_SECRET',
      'SERVICE_AUTH=jwt needs SERVICE_JWT_SECRET, SERVICE_JWT_JWKS_URL or SERVICE_JWT_PUBLIC_KEY',
    );
  }
  const getKey: JWTVerifyGetKey = async (header, token) => {
    if (header.alg === 'HS256' && secret) return secret;
    if (header.alg === 'RS256' && rsa) return typeof rsa === 'function' ? rsa(header, token) : rsa;
    // jwtVerify already refuses algorithms outside the list; this keeps the mapping closed.
    throw new errors.JOSEAlgNotAllowed('"alg" (Algorithm) Header Parameter value not allowed');
  };
  return { algorithms, getKey };
}

function hmacSecret(secret: string): Uint8Array {
  const bytes = new TextEncoder().encode(secret);
  if (bytes.byteLength < MIN_SECRET_BYTES) {
    throw new ConfigError('SERVICE_JWT_SECRET', `must be at least ${MIN_SECRET_BYTES} bytes for HS256`);
  }
  return bytes;
}

function rsaKey(options: JwtOptions): RsaKey | undefined {
  if (options.jwksUrl !== undefined && options.publicKeyPem !== undefined) {
    throw new ConfigError('SERVICE_JWT_PUBLIC_KEY', 'set SERVICE_JWT_JWKS_URL or SERVICE_JWT_PUBLIC_KEY, not both');
  }
  if (options.publicKeyPem !== undefined) return staticRsaKey(options.publicKeyPem);
  if (options.jwksUrl !== undefined) return remoteKeySet(options.jwksUrl, options);
  return undefined;
}

function staticRsaKey(pem: string): KeyObject {
  // Env files often carry a PEM on one line with literal "\n" sequences.
  const text = pem.replace(/\\n/g, '\n').trim();
  if (!/^-----BEGIN PUBLIC KEY-----\n[\s\S]+\n-----END PUBLIC KEY-----$/.test(text)) {
    throw new ConfigError('SERVICE_JWT_PUBLIC_KEY', 'expected a PEM "BEGIN PUBLIC KEY" (SPKI) block');
  }
  let key: KeyObject;
  try {
    key = createPublicKey({ key: text, format: 'pem', type: 'spki' });
  } catch (error) {
    throw new ConfigError('SERVICE_JWT_PUBLIC_KEY', `not a readable public key (${(error as Error).message})`);
  }
  if (key.asymmetricKeyType !== 'rsa') {
    throw new ConfigError('SERVICE_JWT_PUBLIC_KEY', `expected an RSA key, got ${key.asymmetricKeyType ?? 'unknown'}`);
  }
  if ((key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS) {
    throw new ConfigError('SERVICE_JWT_PUBLIC_KEY', `RSA keys must have at least ${MIN_RSA_BITS} bits`);
  }
  return key;
}

function remoteKeySet(href: string, options: JwtOptions): JWTVerifyGetKey {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    throw new ConfigError('SERVICE_JWT_JWKS_URL', 'not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError('SERVICE_JWT_JWKS_URL', 'must be an http(s) URL');
  }
  const keySet = createRemoteJWKSet(url, {
    timeoutDuration: options.jwksTimeoutMs ?? 5000,
    cooldownDuration: options.jwksCooldownMs ?? 30_000,
    cacheMaxAge: options.jwksCacheMaxAgeMs ?? 600_000,
    [customFetch]: options.fetch as FetchImplementation | undefined,
  });
  return async (header, token) => {
    try {
      return await keySet(header, token);
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) throw error;
      // The key set could not be fetched or read: not the caller's fault, and not a pass.
      throw new AppError('unavailable', 'The signing keys of the token issuer could not be fetched.', {
        cause: error,
      });
    }
  };
}
