import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import {
  isFreshTimestamp,
  singleHeader,
  type SignatureVerifier,
  type TimestampToleranceOptions,
} from '../shared/signature-verifier.js';

/** DER prefix of an Ed25519 SubjectPublicKeyInfo; the 32 raw key bytes follow it. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/**
 * Discord's interaction signature: Ed25519 by the application's public key (64 hex digits,
 * from the developer portal) over `X-Signature-Timestamp` followed by the raw body, hex in
 * `X-Signature-Ed25519`. Discord probes the endpoint with bad signatures and drops it unless
 * they get 401. Discord does not require it, but a timestamp outside the tolerance window is
 * refused too, so a captured interaction cannot be replayed later.
 */
export function discordSignature(publicKeyHex: string, options: TimestampToleranceOptions = {}): SignatureVerifier {
  const key = importPublicKey(publicKeyHex);
  return (rawBody, headers) => {
    const signature = singleHeader(headers, 'x-signature-ed25519');
    const timestamp = singleHeader(headers, 'x-signature-timestamp');
    if (signature === undefined || timestamp === undefined) {
      return { ok: false, reason: 'Missing X-Signature-Ed25519 or X-Signature-Timestamp header.' };
    }
    if (!/^[0-9a-fA-F]{128}$/.test(signature)) return { ok: false, reason: 'Invalid request signature.' };
    if (!isFreshTimestamp(timestamp, options)) {
      return { ok: false, reason: 'The X-Signature-Timestamp is outside the tolerance window.' };
    }
    const signed = Buffer.concat([Buffer.from(timestamp, 'utf8'), rawBody]);
    return verify(null, signed, key, Buffer.from(signature, 'hex'))
      ? { ok: true }
      : { ok: false, reason: 'Invalid request signature.' };
  };
}

function importPublicKey(hex: string): KeyObject {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new TypeError('A Discord public key is 64 hexadecimal digits');
  return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(hex, 'hex')]), format: 'der', type: 'spki' });
}
