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
    [customFetch]: cappedFetch(options.fetch ?? globalThis.fetch, options.jwksMaxBytes ?? JWKS_MAX_BYTES),
  });
  const backoff = failureBackoff(options.jwksCooldownMs ?? 30_000);
  return async (header, token) => {
    backoff.check();
    try {
      const key = await keySet(header, token);
      backoff.succeeded();
      return key;
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) throw error;
      backoff.failed();
      throw keysUnavailable(error);
    }
  };
}

/** The largest key set we read: real ones are a few kilobytes. */
export const JWKS_MAX_BYTES = 1024 * 1024;

function keysUnavailable(cause: unknown): AppError {
  // The key set could not be fetched or read: not the caller's fault, and not a pass.
  return new AppError('unavailable', 'The signing keys of the token issuer could not be fetched.', { cause });
}

/**
 * After a failed key-set fetch, tokens needing the set are answered 503 without fetching
 * again for a while (1 s, doubling up to the cooldown), so a down or slow issuer is not
 * hammered by every request; jose's own cooldown only follows a successful fetch.
 */
function failureBackoff(maxMs: number): { check(): void; failed(): void; succeeded(): void } {
  let failures = 0;
  let until = 0;
  return {
    check() {
      if (Date.now() < until) throw keysUnavailable(new Error('key-set fetch backing off after a failure'));
    },
    failed() {
      failures += 1;
      until = Date.now() + Math.min(maxMs, 1000 * 2 ** (failures - 1));
    },
    succeeded() {
      failures = 0;
      until = 0;
    },
  };
}

/** A fetch that refuses a response body over `maxBytes`, by its Content-Length or as it streams in. */
function cappedFetch(fetchImpl: typeof fetch, maxBytes: number): FetchImplementation {
  return async (url, init) => {
    const response = await fetchImpl(url, init as RequestInit);
    const tooBig = () => new Error(`the key set is larger than ${maxBytes} bytes`);
    if (Number(response.headers.get('content-length') ?? 0) > maxBytes) {
      await response.body?.cancel();
      throw tooBig();
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    if (response.body) {
      const reader = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > maxBytes) {
          await reader.cancel();
          throw tooBig();
        }
        chunks.push(value);
      }
    }
    return new Response(Buffer.concat(chunks), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
