import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { LimiterFactory } from '../../src/ports/limiter.js';

/**
 * The Limiter port's behaviour, run against every adapter. `makeFactory` returns a fresh
 * factory per test (for Redis: a fresh key prefix), so tests never share counters.
 */
export function limiterContract(name: string, makeFactory: () => Promise<LimiterFactory>): void {
  describe(`Limiter contract: ${name}`, () => {
    const key = () => `client-${randomUUID()}`;

    it('allows `points` requests per window, then refuses', async () => {
      const limiter = (await makeFactory())({ name: 'global', points: 3, durationSec: 60 });
      const k = key();
      const results = [];
      for (let i = 0; i < 5; i += 1) results.push(await limiter.consume(k));
      expect(results.map((r) => r.allowed)).toEqual([true, true, true, false, false]);
      expect(results.map((r) => r.remaining)).toEqual([2, 1, 0, 0, 0]);
      for (const r of results) {
        expect(r.policy.name).toBe('global');
        expect(r.resetMs).toBeGreaterThan(0);
        expect(r.resetMs).toBeLessThanOrEqual(60_000);
      }
    });

    it('counts each key on its own', async () => {
      const limiter = (await makeFactory())({ name: 'global', points: 1, durationSec: 60 });
      const [a, b] = [key(), key()];
      expect((await limiter.consume(a)).allowed).toBe(true);
      expect((await limiter.consume(a)).allowed).toBe(false);
      expect((await limiter.consume(b)).allowed).toBe(true);
    });

    it('counts each policy on its own for the same key', async () => {
      const factory = await makeFactory();
      const perKey = factory({ name: 'key', points: 1, durationSec: 60 });
      const perTenant = factory({ name: 'tenant', points: 1, durationSec: 60 });
      const k = key();
      expect((await perKey.consume(k)).allowed).toBe(true);
      expect((await perTenant.consume(k)).allowed).toBe(true);
      expect((await perKey.consume(k)).allowed).toBe(false);
    });

    it('consumes several points at once', async () => {
      const limiter = (await makeFactory())({ name: 'global', points: 10, durationSec: 60 });
      const k = key();
      expect(await limiter.consume(k, 7)).toMatchObject({ allowed: true, remaining: 3 });
      expect(await limiter.consume(k, 4)).toMatchObject({ allowed: false, remaining: 0 });
    });

    it('starts a new window once the old one ends', async () => {
      const limiter = (await makeFactory())({ name: 'global', points: 1, durationSec: 1 });
      const k = key();
      expect((await limiter.consume(k)).allowed).toBe(true);
      const refused = await limiter.consume(k);
      expect(refused.allowed).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, refused.resetMs + 50));
      expect((await limiter.consume(k)).allowed).toBe(true);
    });
  });
}
