import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { MemoryStore } from '../../src/adapters/memory/store.js';
import { RedisStore } from '../../src/adapters/redis/store.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { scheduleStoreContract } from './schedule-store.contract.js';

let redis: TestRedis;
const clients: Redis[] = [];

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  for (const client of clients) client.disconnect();
  await redis.stop();
});

scheduleStoreContract('memory', async () => new MemoryStore());

scheduleStoreContract('redis', async () => {
  const client = new Redis(redis.url);
  clients.push(client);
  return new RedisStore(client, { keyPrefix: uniquePrefix() });
});
