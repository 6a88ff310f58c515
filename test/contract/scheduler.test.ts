import { MemoryScheduler } from '../../src/adapters/memory/scheduler.js';
import { MemoryStore } from '../../src/adapters/memory/store.js';
import { BullScheduleConsumer, BullScheduler } from '../../src/adapters/redis/scheduler.js';
import { RedisStore } from '../../src/adapters/redis/store.js';
import { uniquePrefix, useRedis } from '../support/redis.js';
import { schedulerContract } from './scheduler.contract.js';

const redis = useRedis();

schedulerContract('memory', async () => {
  // The embedded scheduler is its own consumer.
  const scheduler = new MemoryScheduler();
  return { scheduler, consumer: scheduler, store: new MemoryStore() };
});

schedulerContract('redis', async () => {
  const prefix = uniquePrefix('schedules');
  const connection = () => redis.connect({ maxRetriesPerRequest: null });
  return {
    scheduler: new BullScheduler({ connection: connection(), prefix }),
    consumer: new BullScheduleConsumer({ connection: connection(), prefix }),
    store: new RedisStore(connection(), { keyPrefix: prefix }),
  };
});
