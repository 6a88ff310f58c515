import { MemoryGraphItemStore } from '../../src/adapters/memory/graph-items.js';
import { redisGraphItemStore } from '../../src/adapters/redis/graph-items.js';
import { uniquePrefix, useRedis } from '../support/redis.js';
import { graphStoreContract } from './store.contract.js';

const redis = useRedis();

graphStoreContract('memory', async (options) => new MemoryGraphItemStore(options));

graphStoreContract('redis', async (options) => redisGraphItemStore(redis.connect(), { keyPrefix: uniquePrefix('lg-store'), ...options }));
