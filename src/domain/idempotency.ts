import { createHash } from 'node:crypto';

/**
 * Idempotency keys of run starts (`Idempotency-Key`, as Stripe's API has them): a client sends
 * one key per logical start and the same key on every retry of it; a retry with the same key
 * and the same run fields answers the run the first one started instead of starting another.
 */

/** What a key may be: 1–255 visible ASCII characters (no spaces), e.g. a UUID. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7E]{1,255}$/;

/** How long a key is remembered after its start: 24 hours (then the same key starts anew). */
export const IDEMPOTENCY_TTL_MS = 86_400_000;

/**
 * A key as the stores keep it: `scope` is the digest of the caller (tenant-wide storage is
 * per tenant already) and the client's key, so callers never share keys and a long key never
 * becomes a long storage key; `fingerprint` is the digest of the run fields of the start.
 */
export interface IdempotentStart {
  scope: string;
  fingerprint: string;
}

/** The stored form of `key` sent by `subject` (the principal) for a start of `fields`. */
export function idempotentStart(subject: string, key: string, fields: Record<string, unknown>): IdempotentStart {
  return { scope: digest(`${subject}\n${key}`), fingerprint: digest(canonicalJson(fields)) };
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}

/** JSON with object keys sorted at every depth and undefined members left out: equal values, equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([name, member]) => `${JSON.stringify(name)}:${canonicalJson(member)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
