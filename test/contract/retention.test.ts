import { MemoryStore } from '../../src/adapters/memory/store.js';
import { RedisStore } from '../../src/adapters/redis/store.js';
import { uniquePrefix, useRedis } from '../support/redis.js';
import { retentionContract } from './retention.contract.js';

const redis = useRedis();

retentionContract('memory', async (options) => new MemoryStore(options));

retentionContract('redis', async (options) => new RedisStore(redis.connect(), { keyPrefix: uniquePrefix('retention'), ...options }));
