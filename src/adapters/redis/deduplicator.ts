import { createHash } from 'node:crypto';
import type { RedisClient } from './connection.js';
import type { Deduplicator } from '../../ports/deduplicator.js';

/**
 * Delivery ids shared by every receiver on one Redis: a key per id (`SET NX PX`, one slot), named
 * by the id's digest so a sender's id never becomes a long key.
 */
export class RedisDeduplicator implements Deduplicator {
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

  private key(id: string): string {
    return `${this.keyPrefix}:deliveries:${createHash('sha256').update(id).digest('base64url')}`;
  }
}
