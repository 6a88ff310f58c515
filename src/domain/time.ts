import { randomBytes } from 'node:crypto';

/** RFC 3339 in UTC with milliseconds, the one timestamp format of the API. */
export function nowIso(clock: () => number = Date.now): string {
  return new Date(clock()).toISOString();
}

let lastMs = 0;
let counter = 0;

/**
 * A UUIDv7: 48 bits of milliseconds then random bits, so ids sort by creation time.
 * A per-process counter in the random part keeps ids minted in one millisecond ordered.
 */
export function newId(): string {
  const ms = Date.now();
  if (ms === lastMs) counter = (counter + 1) & 0xfff;
  else {
    lastMs = ms;
    counter = randomBytes(2).readUInt16BE(0) & 0x7ff;
  }
  const bytes = randomBytes(16);
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | (counter >> 8);
  bytes[7] = counter & 0xff;
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
