import { RedisKeys } from '../../src/adapters/redis/keys.js';
import { BullRunConsumer, BullRunQueue } from '../../src/adapters/redis/run-queue.js';
import { admissionContract, type AdmissionFactory } from '../contract/admission.contract.js';
import { agentCapsContract } from '../contract/agent-caps.contract.js';
import { useRedisCluster } from '../support/redis-cluster.js';
import { uniquePrefix } from '../support/redis.js';

/**
 * The admission rule on a real Redis Cluster: its scripts touch only keys of the runs queue's
 * hash tag, the agents' parked lists included (a key of another slot is refused by the cluster).
 */
const redis = useRedisCluster();

const forever = (name: string) => redis.open({ name, maxRetriesPerRequest: null });

const onCluster: AdmissionFactory = async (concurrency, fairShare) => {
  const prefix = new RedisKeys(uniquePrefix('admission')).queuePrefix(true);
  return {
    queue: new BullRunQueue({ connection: forever('queue'), prefix, fairShare }),
    consumer: new BullRunConsumer({ connection: forever('worker'), prefix, concurrency, lockDurationMs: 30_000, fairShare }),
  };
};

admissionContract('redis cluster', onCluster);
agentCapsContract('redis cluster', onCluster);
