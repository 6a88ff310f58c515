import { MemoryStore } from '../../src/adapters/memory/store.js';
import { RedisStore } from '../../src/adapters/redis/store.js';
import { uniquePrefix, useRedis } from '../support/redis.js';
import { lifecycleContract } from './lifecycle.contract.js';

const redis = useRedis();

lifecycleContract('memory', async (options) => new MemoryStore(options));

lifecycleContract('redis', async (options) => new RedisStore(redis.connect(), { keyPrefix: uniquePrefix('lifecycle'), ...options }));
