import { describe, expect, it } from 'vitest';
import { MemoryDeduplicator } from '../../src/adapters/memory/deduplicator.js';
import { RedisDeduplicator } from '../../src/adapters/redis/deduplicator.js';
import type { Deduplicator, Notes } from '../../src/ports/deduplicator.js';
import { uniquePrefix, useRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

const redis = useRedis();

/** The delivery-id contract, on both adapters: a claim holds for its time, release gives it up. */
function deduplicatorContract(name: string, make: () => Promise<Deduplicator & Notes>, shared: (() => Promise<Deduplicator & Notes>) | null): void {
  describe(`Deduplicator contract: ${name}`, () => {
    it('claims an id once while the claim holds; other ids are independent', async () => {
      const dedupe = await make();
      expect(await dedupe.claim('msg_1', 60_000)).toBe(true);
      expect(await dedupe.claim('msg_1', 60_000)).toBe(false);
      expect(await dedupe.claim('msg_2', 60_000)).toBe(true);
    });

    it('lets an id be claimed again once released (a failed delivery) or expired', async () => {
      const dedupe = await make();
      expect(await dedupe.claim('msg_r', 60_000)).toBe(true);
      await dedupe.release('msg_r');
      expect(await dedupe.claim('msg_r', 60_000)).toBe(true);
      expect(await dedupe.claim('msg_e', 50)).toBe(true);
      await waitFor('the claim to expire', async () => (await dedupe.claim('msg_e', 50)) === true, 5_000, 20);
    });

    it('gives exactly one of many concurrent claims of an id', async () => {
      const dedupe = await make();
      const results = await Promise.all(Array.from({ length: 25 }, () => dedupe.claim('msg_race', 60_000)));
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('takes any id: long, unicode, or names of object properties', async () => {
      const dedupe = await make();
      for (const id of ['x'.repeat(10_000), 'ünïcode✓', '__proto__', 'constructor', 'hasOwnProperty']) {
        expect(await dedupe.claim(id, 60_000), id.slice(0, 20)).toBe(true);
        expect(await dedupe.claim(id, 60_000), id.slice(0, 20)).toBe(false);
      }
    });

    it('keeps a note for its time, the newest value of an id, apart from claims of the same id', async () => {
      const notes = await make();
      expect(await notes.noted('where')).toBeUndefined();
      await notes.note('where', 'C1/1.0001', 60_000);
      await notes.note('where', 'C1/1.0002', 60_000);
      expect(await notes.noted('where')).toBe('C1/1.0002');
      expect(await notes.claim('where', 60_000)).toBe(true);
      expect(await notes.noted('where')).toBe('C1/1.0002');
      await notes.note('brief', 'x', 50);
      await waitFor('the note to expire', async () => (await notes.noted('brief')) === undefined, 5_000, 20);
    });

    if (shared) {
      it('shares claims and notes between processes on the same backend', async () => {
        const [one, two] = await Promise.all([shared(), shared()]);
        expect(await one.claim('msg_shared', 60_000)).toBe(true);
        expect(await two.claim('msg_shared', 60_000)).toBe(false);
        await one.note('note_shared', 'v', 60_000);
        expect(await two.noted('note_shared')).toBe('v');
      });
    }
  });
}

deduplicatorContract('memory', async () => new MemoryDeduplicator(), null);
const sharedPrefix = uniquePrefix('dedupe-shared');
deduplicatorContract('redis', async () => new RedisDeduplicator(redis.connect(), uniquePrefix('dedupe')), async () => new RedisDeduplicator(redis.connect(), sharedPrefix));

describe('MemoryDeduplicator', () => {
  it('stays bounded: past its size the oldest claims are dropped', async () => {
    const dedupe = new MemoryDeduplicator(3);
    for (const id of ['a', 'b', 'c', 'd']) expect(await dedupe.claim(id, 60_000)).toBe(true);
    expect(await dedupe.claim('a', 60_000)).toBe(true);
    expect(await dedupe.claim('d', 60_000)).toBe(false);
    for (const id of ['a', 'b', 'c', 'd']) await dedupe.note(id, id, 60_000);
    expect(await dedupe.noted('a')).toBeUndefined();
    expect(await dedupe.noted('d')).toBe('d');
  });
});
