import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { ConfigError } from '../config.js';
import type { Principal } from '../domain/types.js';
import { digestKey, type ApiKeyEntry } from '../domain/api-key-entries.js';
import type { Authenticator } from './authenticator.js';
import { unauthorized } from './errors.js';
import { DEFAULT_API_KEY_HEADER } from './options.js';

const HEADER_NAME = /^[A-Za-z0-9-]+$/;

/** The API key scheme's challenge, naming the header the key belongs in. */
export function apiKeyChallenge(header: string): string {
  return `ApiKey realm="agentplane", header="${header}"`;
}

/**
 * Authenticates by an API key in one header. Keys are known only by their SHA-256 digests: the
 * presented key is hashed, looked up by digest, and the digests compared in constant time.
 * The principal's subject is a digest prefix, so logs and quotas never see the key.
 */
export function createApiKeyAuthenticator(
  entries: readonly ApiKeyEntry[],
  header: string = DEFAULT_API_KEY_HEADER,
): Authenticator {
  if (!HEADER_NAME.test(header)) throw new ConfigError('SERVICE_API_KEY_HEADER', 'must be a header name');
  if (entries.length === 0) throw new ConfigError('SERVICE_API_KEYS', 'SERVICE_AUTH=apikey needs at least one key');
  const byDigest = new Map(entries.map((entry) => [entry.digest.toString('hex'), entry]));
  const challenge = apiKeyChallenge(header);
  const field = header.toLowerCase();
  return Object.freeze({
    mode: 'apikey' as const,
    authenticate(headers: IncomingHttpHeaders): Promise<Principal> {
      const value = headers[field];
      if (value === undefined || value === '') {
        return Promise.reject(unauthorized(challenge, `The ${header} header is required.`));
      }
      const digest = digestKey(String(value));
      const hex = digest.toString('hex');
      const entry = byDigest.get(hex);
      if (entry === undefined || !timingSafeEqual(entry.digest, digest)) {
        return Promise.reject(unauthorized(challenge, 'The API key is invalid.'));
      }
      return Promise.resolve({ subject: `apikey:${hex.slice(0, 16)}`, tenant: entry.tenant, role: entry.role, kind: 'apikey' });
    },
  });
}
