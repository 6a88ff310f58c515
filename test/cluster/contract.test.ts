import { describe, expect, it } from 'vitest';
import type { RedisClient } from '../../src/adapters/redis/connection.js';
import { RedisEventBus } from '../../src/adapters/redis/event-bus.js';
import { redisGraphCheckpointStore } from '../../src/adapters/redis/graph-checkpoints.js';
import { RedisKeys } from '../../src/adapters/redis/keys.js';
import { redisLimiterFactory } from '../../src/adapters/redis/limiter.js';
import { BullRunConsumer, BullRunQueue } from '../../src/adapters/redis/run-queue.js';
import { BullScheduleConsumer, BullScheduler } from '../../src/adapters/redis/scheduler.js';
import { RedisStore } from '../../src/adapters/redis/store.js';
import { eventBusContract } from '../contract/event-bus.contract.js';
import { lifecycleContract } from '../contract/lifecycle.contract.js';
import { limiterContract } from '../contract/limiter.contract.js';
import { listingContract } from '../contract/listing.contract.js';
import { retentionContract } from '../contract/retention.contract.js';
import { runQueueContract } from '../contract/run-queue.contract.js';
import { scheduleStoreContract } from '../contract/schedule-store.contract.js';
import { schedulerContract } from '../contract/scheduler.contract.js';
import { sessionCreationContract } from '../contract/session-creation.contract.js';
import { storeContract } from '../contract/store.contract.js';
import { graphKeysLeft } from '../support/graph-keys.js';
import { useRedisCluster } from '../support/redis-cluster.js';
import { uniquePrefix } from '../support/redis.js';

/**
 * Every contract suite of the Redis adapters, on a real Redis Cluster (3 masters, 3 replicas):
 * the clients come from the application's connection factory, BullMQ gets its hash-tagged
 * prefix, events go over sharded pub/sub. The suites' tenants land on different masters.
 */
const redis = useRedisCluster();

describe('the test tenants on the cluster', () => {
  it('land on different masters, so cross-tenant reads and per-tenant scripts span the cluster', async () => {
    const cluster = redis.cluster();
    expect(await cluster.masters()).toHaveLength(3);
    const masters = await Promise.all(['tenant-a', 'tenant-c', 'acme', 'hooli'].map((t) => cluster.masterOf(`{${t}}`)));
    expect(new Set(masters.slice(0, 2)).size).toBe(2);
    expect(new Set(masters.slice(2)).size).toBe(2);
  });
});

const commands = () => redis.open({ name: 'commands', commandTimeoutMs: 5_000 });
const forever = (name: string, shardedSubscriber = false) => redis.open({ name, maxRetriesPerRequest: null, shardedSubscriber });
/** BullMQ's prefix on a cluster, as the backend builds it. */
const queuePrefix = (name: string) => new RedisKeys(uniquePrefix(name)).queuePrefix(true);

storeContract('redis cluster', async () => new RedisStore(commands(), { keyPrefix: uniquePrefix() }));
lifecycleContract('redis cluster', async (options) => new RedisStore(commands(), { keyPrefix: uniquePrefix('lifecycle'), ...options }));
retentionContract('redis cluster', async (options) => {
  const client = commands();
  const keyPrefix = uniquePrefix('retention');
  return {
    store: new RedisStore(client, { keyPrefix, ...options }),
    graphCheckpoints: redisGraphCheckpointStore(client, keyPrefix),
    graphKeysLeft: graphKeysLeft(client, new RedisKeys(keyPrefix)),
  };
});
scheduleStoreContract('redis cluster', async () => new RedisStore(commands(), { keyPrefix: uniquePrefix() }));
listingContract('redis cluster', async (options) => new RedisStore(commands(), { keyPrefix: uniquePrefix('listing'), ...options }));
sessionCreationContract('redis cluster', async (options) => new RedisStore(commands(), { keyPrefix: uniquePrefix('sessions'), ...options }));

eventBusContract('redis cluster (sharded pub/sub)', async (retain, bytes) => {
  return new RedisEventBus({ redis: commands(), subscriber: forever('subscriber', true), keyPrefix: uniquePrefix('events'), retain, ...bytes });
});

/** The limiter sends nothing to a client that is not ready yet (it asks the insurance instead). */
async function ready(client: RedisClient): Promise<RedisClient> {
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
  return client;
}
limiterContract('redis cluster', async () => redisLimiterFactory({ client: await ready(commands()), prefix: uniquePrefix('limits') }));

runQueueContract('redis cluster', async (concurrency) => {
  const prefix = queuePrefix('runs');
  return {
    queue: new BullRunQueue({ connection: forever('queue'), prefix }),
    consumer: new BullRunConsumer({ connection: forever('worker'), prefix, concurrency, lockDurationMs: 30_000 }),
  };
});

schedulerContract('redis cluster', async () => {
  const prefix = uniquePrefix('schedules');
  const bullPrefix = new RedisKeys(prefix).queuePrefix(true);
  return {
    scheduler: new BullScheduler({ connection: forever('queue'), prefix: bullPrefix }),
    consumer: new BullScheduleConsumer({ connection: forever('schedule-worker'), prefix: bullPrefix }),
    store: new RedisStore(commands(), { keyPrefix: prefix }),
  };
});
