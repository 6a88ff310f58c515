import { createHash } from 'node:crypto';
import type { RedisClient } from './connection.js';
import type { Deduplicator, Notes } from '../../ports/deduplicator.js';

/**
 * Delivery ids shared by every receiver on one Redis: a key per id (`SET NX PX`, one slot), named
 * by the id's digest so a sender's id never becomes a long key. Notes: a key per id as well
 * (`SET PX`), in a key space of their own.
 */
export class RedisDeduplicator implements Deduplicator, Notes {
  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {}

  async claim(id: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.key(id), '1', 'PX', Math.max(1, Math.round(ttlMs)), 'NX')) === 'OK';
  }

  async release(id: string): Promise<void> {
    await this.redis.del(this.key(id));
  }

  async note(id: string, value: string, ttlMs: number): Promise<void> {
    await this.redis.set(this.key(id, 'notes'), value, 'PX', Math.max(1, Math.round(ttlMs)));
  }

  async noted(id: string): Promise<string | undefined> {
    return (await this.redis.get(this.key(id, 'notes'))) ?? undefined;
  }

  private key(id: string, space = 'deliveries'): string {
    return `${this.keyPrefix}:${space}:${createHash('sha256').update(id).digest('base64url')}`;
  }
}
