import { createHmac } from 'node:crypto';

/**
 * The Standard Webhooks signature (standardwebhooks.com), shared by the senders and receivers
 * of agentplane: HMAC-SHA256 keyed with the secret's bytes over `<webhook-id>.<webhook-timestamp>.<body>`,
 * base64, sent as `v1,<signature>` in `webhook-signature`.
 */

/**
 * The key of a Standard Webhooks secret: base64, optionally prefixed `whsec_`. Throws a
 * TypeError (never naming the secret) when it is not base64.
 */
export function standardWebhooksKey(secret: string): Buffer {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) {
    throw new TypeError('A Standard Webhooks secret is base64, optionally prefixed with whsec_');
  }
  return Buffer.from(encoded, 'base64');
}

/** The base64 signature (without its `v1,`) of one message: the exact body bytes sent or received. */
export function signStandardWebhook(key: Buffer, id: string, timestamp: string, body: Buffer | string): string {
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
}
