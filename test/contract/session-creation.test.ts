import { MemoryStore } from '../../src/adapters/memory/store.js';
import { RedisStore } from '../../src/adapters/redis/store.js';
import { uniquePrefix, useRedis } from '../support/redis.js';
import { sessionCreationContract } from './session-creation.contract.js';

const redis = useRedis();

sessionCreationContract('memory', async (options) => new MemoryStore(options));

sessionCreationContract('redis', async (options) => new RedisStore(redis.connect(), { keyPrefix: uniquePrefix('sessions'), ...options }));
