import { MemoryRunQueue } from '../../src/adapters/memory/run-queue.js';
import { BullRunConsumer, BullRunQueue } from '../../src/adapters/redis/run-queue.js';
import { uniquePrefix, useRedis } from '../support/redis.js';
import { admissionContract } from './admission.contract.js';

const redis = useRedis();

admissionContract('memory', async (concurrency, fairShare) => {
  // The embedded queue is its own consumer.
  const queue = new MemoryRunQueue({ concurrency, fairShare });
  return { queue, consumer: queue };
});

admissionContract('redis', async (concurrency, fairShare) => {
  const prefix = uniquePrefix('admission');
  const connection = () => redis.connect({ maxRetriesPerRequest: null });
  return {
    queue: new BullRunQueue({ connection: connection(), prefix, fairShare }),
    consumer: new BullRunConsumer({ connection: connection(), prefix, concurrency, lockDurationMs: 30_000, fairShare }),
  };
});
