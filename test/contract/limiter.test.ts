import type { Redis } from 'ioredis';
import { memoryLimiterFactory } from '../../src/adapters/memory/limiter.js';
import { redisLimiterFactory } from '../../src/adapters/redis/limiter.js';
import { uniquePrefix, useRedis } from '../support/redis.js';
import { limiterContract } from './limiter.contract.js';

const redis = useRedis();

/** The limiter sends nothing to a client that is not ready yet (it asks the insurance instead). */
async function ready(client: Redis): Promise<Redis> {
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
  return client;
}

limiterContract('memory', async () => memoryLimiterFactory);
limiterContract('redis', async () => redisLimiterFactory({ client: await ready(redis.connect()), prefix: uniquePrefix('limits') }));
