import { createHmac } from 'node:crypto';
import { constantTimeEqual } from '../shared/constant-time-equal.js';
import {
  isFreshTimestamp,
  singleHeader,
  type SignatureVerifier,
  type TimestampToleranceOptions,
} from '../shared/signature-verifier.js';

/**
 * Slack's v0 request signature: `X-Slack-Signature: v0=<hex HMAC-SHA256>` keyed with the app's
 * signing secret over `v0:<X-Slack-Request-Timestamp>:<raw body>`. Slack asks receivers to
 * refuse timestamps more than five minutes away, which bounds replays.
 */
export function slackSignature(signingSecret: string, options: TimestampToleranceOptions = {}): SignatureVerifier {
  if (signingSecret === '') throw new TypeError('slackSignature needs a non-empty signing secret');
  return (rawBody, headers) => {
    const signature = singleHeader(headers, 'x-slack-signature');
    const timestamp = singleHeader(headers, 'x-slack-request-timestamp');
    if (signature === undefined || timestamp === undefined) {
      return { ok: false, reason: 'Missing X-Slack-Signature or X-Slack-Request-Timestamp header.' };
    }
    if (!isFreshTimestamp(timestamp, options)) {
      return { ok: false, reason: 'The X-Slack-Request-Timestamp is outside the tolerance window.' };
    }
    const expected = `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:`).update(rawBody).digest('hex')}`;
    return constantTimeEqual(signature, expected) ? { ok: true } : { ok: false, reason: 'Invalid request signature.' };
  };
}
