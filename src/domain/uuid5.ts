import { createHash } from 'node:crypto';

/**
 * A name-based UUID, version 5 (RFC 9562 §5.5): the SHA-1 of the namespace's 16 bytes and the
 * name's UTF-8, cut to 16 bytes with the version and variant bits set. The same name in the
 * same namespace is the same id on every process, so ids derived this way need no storage.
 */
export function uuid5(name: string, namespace: string): string {
  const hex = namespace.replaceAll('-', '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new Error(`uuid5: "${namespace}" is not a UUID.`);
  const bytes = createHash('sha1').update(Buffer.from(hex, 'hex')).update(name, 'utf8').digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const out = bytes.toString('hex');
  return `${out.slice(0, 8)}-${out.slice(8, 12)}-${out.slice(12, 16)}-${out.slice(16, 20)}-${out.slice(20)}`;
}
