import { MemoryEventBus } from '../../src/adapters/memory/event-bus.js';
import { RedisEventBus } from '../../src/adapters/redis/event-bus.js';
import { uniquePrefix, useRedis } from '../support/redis.js';
import { eventBusContract } from './event-bus.contract.js';

const redis = useRedis();

eventBusContract('memory', async (retain, bytes) => new MemoryEventBus(retain, bytes));

eventBusContract('redis', async (retain, bytes) => {
  const subscriber = redis.connect({ maxRetriesPerRequest: null });
  return new RedisEventBus({ redis: redis.connect(), subscriber, keyPrefix: uniquePrefix('events'), retain, ...bytes });
});
