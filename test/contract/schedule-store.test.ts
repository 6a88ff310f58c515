import { MemoryStore } from '../../src/adapters/memory/store.js';
import { RedisStore } from '../../src/adapters/redis/store.js';
import { uniquePrefix, useRedis } from '../support/redis.js';
import { scheduleStoreContract } from './schedule-store.contract.js';

const redis = useRedis();

scheduleStoreContract('memory', async () => new MemoryStore());

scheduleStoreContract('redis', async () => {
  return new RedisStore(redis.connect(), { keyPrefix: uniquePrefix() });
});
