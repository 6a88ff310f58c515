import { createHmac } from 'node:crypto';
import { constantTimeEqual } from '../shared/constant-time-equal.js';
import { singleHeader, type SignatureVerifier } from './signature-verifier.js';

export interface StandardWebhooksOptions {
  /** Largest accepted distance between `webhook-timestamp` and now, either way. @defaultValue 300 */
  toleranceSec?: number;
  /** Milliseconds since the epoch. @defaultValue Date.now */
  now?: () => number;
}

/**
 * The Standard Webhooks scheme (standardwebhooks.com): HMAC-SHA256 keyed with the base64
 * secret (optionally prefixed `whsec_`) over `<webhook-id>.<webhook-timestamp>.<body>`, sent as
 * space-separated `v1,<base64>` entries in `webhook-signature` so keys can rotate. A timestamp
 * outside the tolerance window is rejected, which bounds how long a captured delivery can be
 * replayed.
 */
export function standardWebhooksSignature(secret: string, options: StandardWebhooksOptions = {}): SignatureVerifier {
  const key = decodeSecret(secret);
  const toleranceSec = options.toleranceSec ?? 300;
  const now = options.now ?? Date.now;
  return (rawBody, headers) => {
    const id = singleHeader(headers, 'webhook-id');
    const timestamp = singleHeader(headers, 'webhook-timestamp');
    const signatures = singleHeader(headers, 'webhook-signature');
    if (id === undefined || timestamp === undefined || signatures === undefined) {
      return { ok: false, reason: 'Missing webhook-id, webhook-timestamp or webhook-signature header.' };
    }
    const seconds = Number(timestamp);
    if (!/^\d+$/.test(timestamp) || Math.abs(now() / 1000 - seconds) > toleranceSec) {
      return { ok: false, reason: 'The webhook-timestamp is outside the tolerance window.' };
    }
    const expected = createHmac('sha256', key)
      .update(`${id}.${timestamp}.`)
      .update(rawBody)
      .digest('base64');
    const matches = signatures
      .split(' ')
      .filter((entry) => entry.startsWith('v1,'))
      .some((entry) => constantTimeEqual(entry.slice(3), expected));
    return matches ? { ok: true } : { ok: false, reason: 'No matching signature.' };
  };
}

function decodeSecret(secret: string): Buffer {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) {
    throw new TypeError('A Standard Webhooks secret is base64, optionally prefixed with whsec_');
  }
  return Buffer.from(encoded, 'base64');
}
