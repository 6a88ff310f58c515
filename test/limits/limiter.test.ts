import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisLimiter, redisLimiterFactory } from '../../src/adapters/redis/limiter.js';
import { type PrivateRedis, startPrivateRedis, uniquePrefix, useRedis } from '../support/redis.js';

// The Limiter contract (both adapters) is test/contract/limiter.test.ts; these are the Redis adapter's own.

/** The limiter sends nothing to a client that is not ready yet (it asks the insurance instead). */
function ready(client: Redis): Promise<void> {
  return new Promise((resolve) => (client.status === 'ready' ? resolve() : client.once('ready', () => resolve())));
}

const redis = useRedis();
let client: Redis;

beforeAll(async () => {
  client = redis.connect();
  await ready(client);
});

describe('RedisLimiter', () => {
  it('keeps every counter under SERVICE_KEY_PREFIX', async () => {
    const prefix = uniquePrefix('limits');
    const factory = redisLimiterFactory({ client, prefix });
    await factory({ name: 'global', points: 5, durationSec: 60 }).consume('::ffff:10.0.0.1');
    await factory({ name: 'tenant', points: 5, durationSec: 60 }).consume('TenantA');
    const keys = (await client.keys(`${prefix}*`)).sort();
    expect(keys).toEqual([`${prefix}:ratelimit:global:::ffff:10.0.0.1`, `${prefix}:ratelimit:tenant:TenantA`]);
    for (const key of keys) expect(await client.ttl(key)).toBeGreaterThan(0);
  });

  it('shares counts between replicas (two clients, two limiters, one Redis)', async () => {
    const prefix = uniquePrefix('limits');
    const other = new Redis(redis.url);
    await ready(other);
    try {
      const policy = { name: 'global', points: 20, durationSec: 60 };
      const replicaA = new RedisLimiter(policy, { client, prefix });
      const replicaB = new RedisLimiter(policy, { client: other, prefix });
      const allowed: boolean[] = [];
      for (let i = 0; i < 21; i += 1) allowed.push((await (i % 2 ? replicaB : replicaA).consume('1.2.3.4')).allowed);
      expect(allowed.filter(Boolean)).toHaveLength(20);
      expect(allowed.at(-1)).toBe(false);
    } finally {
      other.disconnect();
    }
  });
});

describe('RedisLimiter when its Redis fails', () => {
  let own: PrivateRedis;
  let ownClient: Redis;

  beforeAll(async () => {
    own = await startPrivateRedis();
    ownClient = new Redis(own.url, { maxRetriesPerRequest: null, retryStrategy: () => 50 });
    ownClient.on('error', () => {});
    await ready(ownClient);
  });

  afterAll(async () => {
    ownClient.disconnect();
    await own.stop();
  });

  it('answers from the in-memory insurance while Redis is down, and from Redis once it is back', async () => {
    const policy = { name: 'global', points: 3, durationSec: 60 };
    const prefix = uniquePrefix('limits');
    const limiter = new RedisLimiter(policy, { client: ownClient, prefix });
    expect((await limiter.consume('k')).allowed).toBe(true);

    await own.kill();
    // Redis is gone: requests are still answered, and the insurance still limits.
    const during = [];
    for (let i = 0; i < 4; i += 1) during.push((await limiter.consume('k')).allowed);
    expect(during).toEqual([true, true, true, false]);

    await own.restart();
    await ready(ownClient);
    // The restarted (empty) Redis counts again. ioredis may also re-send the one call that was in
    // flight when Redis died (it timed out into the insurance): an over-count of one at most.
    expect((await limiter.consume('k')).allowed).toBe(true);
    expect(Number(await ownClient.get(`${prefix}:ratelimit:global:k`))).toBeGreaterThanOrEqual(1);
    expect(Number(await ownClient.get(`${prefix}:ratelimit:global:k`))).toBeLessThanOrEqual(2);
  });

  // Redis holds every write while the limiter answers: a write sent before the limiter's calls
  // is still unanswered when they are answered, so Redis answered none of them.
  it('answers from the insurance when Redis hangs longer than timeoutMs', { timeout: 15_000 }, async () => {
    const prefix = uniquePrefix('limits');
    const limiter = new RedisLimiter({ name: 'global', points: 2, durationSec: 60 }, { client: ownClient, prefix, timeoutMs: 100 });
    const admin = new Redis(own.url);
    const writer = new Redis(own.url);
    await Promise.all([ready(admin), ready(writer)]);
    let written: Promise<unknown> | undefined;
    try {
      // WRITE mode holds scripts but lets the UNPAUSE below through; it outlasts the test.
      await admin.client('PAUSE', 120_000, 'WRITE');
      let writeAnswered = false;
      written = writer.set(`${prefix}:held`, '1').then(() => (writeAnswered = true));
      const results = await Promise.all([limiter.consume('k'), limiter.consume('k'), limiter.consume('k')]);
      expect(writeAnswered, 'Redis took writes again before the limiter answered').toBe(false);
      expect(results.map((r) => r.allowed).sort()).toEqual([false, true, true]);
    } finally {
      await admin.client('UNPAUSE').catch(() => {});
      await written?.catch(() => {});
      admin.disconnect();
      writer.disconnect();
    }
  });
});
