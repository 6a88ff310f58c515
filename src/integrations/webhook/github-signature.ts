import { createHmac } from 'node:crypto';
import { constantTimeEqual } from '../shared/constant-time-equal.js';
import { singleHeader, type SignatureVerifier } from '../shared/signature-verifier.js';

/**
 * GitHub's scheme: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>` keyed with the
 * webhook's secret. GitHub signs no timestamp, so this scheme has no replay window; the
 * receiver handles an `X-GitHub-Delivery` id once a day (a redelivery of a failed one runs).
 */
const GITHUB_DELIVERY_MEMORY_MS = 24 * 3600 * 1000;

export function githubSignature(secret: string): SignatureVerifier {
  if (secret === '') throw new TypeError('githubSignature needs a non-empty secret');
  return (rawBody, headers) => {
    const header = singleHeader(headers, 'x-hub-signature-256');
    if (header === undefined) return { ok: false, reason: 'Missing X-Hub-Signature-256 header.' };
    const expected = `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
    if (!constantTimeEqual(header, expected)) return { ok: false, reason: 'Signature mismatch.' };
    const delivery = singleHeader(headers, 'x-github-delivery');
    return delivery === undefined || delivery === '' ? { ok: true } : { ok: true, delivery: { id: `github:${delivery}`, replayWindowMs: GITHUB_DELIVERY_MEMORY_MS } };
  };
}
