import { MemoryStore } from '../../src/adapters/memory/store.js';
import { RedisStore } from '../../src/adapters/redis/store.js';
import { uniquePrefix, useRedis } from '../support/redis.js';
import { storeContract } from './store.contract.js';

const redis = useRedis();

storeContract('memory', async () => new MemoryStore());

storeContract('redis', async () => {
  return new RedisStore(redis.connect(), { keyPrefix: uniquePrefix() });
});
