/**
 * Event ids have the form `<ms>-<seq>`: a millisecond timestamp and a sequence number within
 * it. They rise strictly within a tenant (each adapter guarantees it; the Redis adapter's
 * stream ids have this form), so a client's `Last-Event-ID` is compared with them.
 */

/** What a client may send as an event id: `<ms>-<seq>`, each part an exact JavaScript number. */
export const EVENT_ID_PATTERN = /^\d{1,15}-\d{1,15}$/;

/** Orders two event ids: negative when `a` comes first, 0 when equal. */
export function compareEventIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am !== bm ? am - bm : as - bs;
}

