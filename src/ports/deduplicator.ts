/**
 * Remembers delivery ids for a while, across every process on the backend, so a delivery sent
 * again (a replay, or a sender's retry of one already handled) is handled once.
 */
export interface Deduplicator {
  /** Claims `id` for `ttlMs`: true the first time, false while an earlier claim holds. */
  claim(id: string, ttlMs: number): Promise<boolean>;
  /** Gives a claim up: its delivery failed, so the sender's retry must be handled. */
  release(id: string): Promise<void>;
}
