import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Compares two secrets or signatures in time independent of where they differ.
 * Both sides are hashed first so that inputs of different lengths are compared too, without
 * `timingSafeEqual` throwing and without the length itself leaking through an early return.
 */
export function constantTimeEqual(a: string | Uint8Array, b: string | Uint8Array): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

function digest(value: string | Uint8Array): Buffer {
  return createHash('sha256').update(value).digest();
}
