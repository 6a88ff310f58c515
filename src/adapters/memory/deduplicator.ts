import type { Deduplicator, Notes } from '../../ports/deduplicator.js';

/** Ids remembered at most; past it the oldest claims are dropped first. */
const MAX_IDS = 100_000;

/** Delivery ids and notes in this process's memory (embedded mode, and the receiver as a library); as many notes as ids at most. */
export class MemoryDeduplicator implements Deduplicator, Notes {
  /** id → expiry (ms since the epoch), oldest claim first. */
  private readonly claims = new Map<string, number>();
  /** id → value and expiry, oldest note first. */
  private readonly notes = new Map<string, { value: string; expires: number }>();

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

  async note(id: string, value: string, ttlMs: number): Promise<void> {
    const now = Date.now();
    this.notes.delete(id);
    this.notes.set(id, { value, expires: now + ttlMs });
    for (const [oldest, { expires }] of this.notes) {
      if (this.notes.size <= this.maxIds && expires > now) break;
      this.notes.delete(oldest);
    }
  }

  async noted(id: string): Promise<string | undefined> {
    const kept = this.notes.get(id);
    return kept !== undefined && kept.expires > Date.now() ? kept.value : undefined;
  }
}
