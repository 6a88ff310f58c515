import { MemoryRunQueue } from '../../src/adapters/memory/run-queue.js';
import { BullRunConsumer, BullRunQueue } from '../../src/adapters/redis/run-queue.js';
import { uniquePrefix, useRedis } from '../support/redis.js';
import { admissionContract, type AdmissionFactory } from './admission.contract.js';
import { agentCapsContract } from './agent-caps.contract.js';

const redis = useRedis();

const memory: AdmissionFactory = async (concurrency, fairShare) => {
  // The embedded queue is its own consumer.
  const queue = new MemoryRunQueue({ concurrency, fairShare });
  return { queue, consumer: queue };
};

const onRedis: AdmissionFactory = async (concurrency, fairShare) => {
  const prefix = uniquePrefix('admission');
  const connection = () => redis.connect({ maxRetriesPerRequest: null });
  return {
    queue: new BullRunQueue({ connection: connection(), prefix, fairShare }),
    consumer: new BullRunConsumer({ connection: connection(), prefix, concurrency, lockDurationMs: 30_000, fairShare }),
  };
};

admissionContract('memory', memory);
admissionContract('redis', onRedis);
agentCapsContract('memory', memory);
agentCapsContract('redis', onRedis);
