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

/**
 * Small values kept for a while, shared like claims by every process on the backend: what one
 * replica learned (where it posted a chat message) for any other to act on later.
 */
export interface Notes {
  /** Keeps `value` under `id` for `ttlMs`, replacing an earlier value. Ids are apart from claims. */
  note(id: string, value: string, ttlMs: number): Promise<void>;
  /** The value kept under `id`; undefined when none was, or it expired. */
  noted(id: string): Promise<string | undefined>;
}
