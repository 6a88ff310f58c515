import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { MemoryEventBus } from '../../src/adapters/memory/event-bus.js';
import { RedisEventBus } from '../../src/adapters/redis/event-bus.js';
import { startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { eventBusContract } from './event-bus.contract.js';

let redis: TestRedis;
const clients: Redis[] = [];

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  for (const client of clients) client.disconnect();
  await redis.stop();
});

eventBusContract('memory', async (retain) => new MemoryEventBus(retain));

eventBusContract('redis', async (retain) => {
  const commands = new Redis(redis.url);
  const subscriber = new Redis(redis.url, { maxRetriesPerRequest: null });
  clients.push(commands, subscriber);
  return new RedisEventBus({ redis: commands, subscriber, keyPrefix: uniquePrefix('events'), retain });
});
