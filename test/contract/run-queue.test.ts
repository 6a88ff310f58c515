import { MemoryRunQueue } from '../../src/adapters/memory/run-queue.js';
import { BullRunConsumer, BullRunQueue } from '../../src/adapters/redis/run-queue.js';
import { uniquePrefix, useRedis } from '../support/redis.js';
import { runQueueContract } from './run-queue.contract.js';

const redis = useRedis();

runQueueContract('memory', async (concurrency) => {
  // The embedded queue is its own consumer.
  const queue = new MemoryRunQueue({ concurrency });
  return { queue, consumer: queue };
});

runQueueContract('redis', async (concurrency) => {
  const prefix = uniquePrefix('runs');
  const connection = () => redis.connect({ maxRetriesPerRequest: null });
  return {
    queue: new BullRunQueue({ connection: connection(), prefix }),
    consumer: new BullRunConsumer({ connection: connection(), prefix, concurrency, lockDurationMs: 30_000 }),
  };
});
