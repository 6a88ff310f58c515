import { MemoryStore } from '../../src/adapters/memory/store.js';
import { RedisStore } from '../../src/adapters/redis/store.js';
import { uniquePrefix, useRedis } from '../support/redis.js';
import { listingContract } from './listing.contract.js';

const redis = useRedis();

listingContract('memory', async (options) => new MemoryStore(options));

listingContract('redis', async (options) => new RedisStore(redis.connect(), { keyPrefix: uniquePrefix('listing'), ...options }));
