import type { Deduplicator } from '../../ports/deduplicator.js';

/** Ids remembered at most; past it the oldest claims are dropped first. */
const MAX_IDS = 100_000;

/** Delivery ids in this process's memory (embedded mode, and the receiver as a library). */
export class MemoryDeduplicator implements Deduplicator {
  /** id → expiry (ms since the epoch), oldest claim first. */
  private readonly claims = new Map<string, number>();

  constructor(private readonly maxIds = MAX_IDS) {}

  async claim(id: string, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    const held = this.claims.get(id);
    if (held !== undefined && held > now) return false;
    this.claims.delete(id);
    this.claims.set(id, now + ttlMs);
    for (const [oldest, expires] of this.claims) {
      if (this.claims.size <= this.maxIds && expires > now) break;
      this.claims.delete(oldest);
    }
    return true;
  }

  async release(id: string): Promise<void> {
    this.claims.delete(id);
  }
}
