import { signStandardWebhook, standardWebhooksKey } from '../../domain/standard-webhooks.js';
import { constantTimeEqual } from '../shared/constant-time-equal.js';
import {
  isFreshTimestamp,
  replayWindowMs,
  singleHeader,
  type SignatureVerifier,
  type TimestampToleranceOptions,
} from '../shared/signature-verifier.js';

/**
 * The Standard Webhooks scheme (standardwebhooks.com): HMAC-SHA256 keyed with the base64
 * secret (optionally prefixed `whsec_`) over `<webhook-id>.<webhook-timestamp>.<body>`, sent as
 * space-separated `v1,<base64>` entries in `webhook-signature` so keys can rotate. A timestamp
 * outside the tolerance window (5 minutes old, 30 s ahead) is rejected, which bounds how long a
 * captured delivery can be replayed; within it, the receiver handles a `webhook-id` once.
 */
export function standardWebhooksSignature(secret: string, options: TimestampToleranceOptions = {}): SignatureVerifier {
  const key = standardWebhooksKey(secret);
  const window = replayWindowMs(options);
  return (rawBody, headers) => {
    const id = singleHeader(headers, 'webhook-id');
    const timestamp = singleHeader(headers, 'webhook-timestamp');
    const signatures = singleHeader(headers, 'webhook-signature');
    if (id === undefined || timestamp === undefined || signatures === undefined) {
      return { ok: false, reason: 'Missing webhook-id, webhook-timestamp or webhook-signature header.' };
    }
    if (!isFreshTimestamp(timestamp, options)) {
      return { ok: false, reason: 'The webhook-timestamp is outside the tolerance window.' };
    }
    const expected = signStandardWebhook(key, id, timestamp, rawBody);
    const matches = signatures
      .split(' ')
      .filter((entry) => entry.startsWith('v1,'))
      .some((entry) => constantTimeEqual(entry.slice(3), expected));
    // The id is signed with the body: a replay carries it unchanged and is recognised by it.
    return matches ? { ok: true, delivery: { id: `standard-webhooks:${id}`, replayWindowMs: window } } : { ok: false, reason: 'No matching signature.' };
  };
}
