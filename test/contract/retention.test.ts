import { MemoryGraphCheckpointStore } from '../../src/adapters/memory/graph-checkpoints.js';
import { MemoryStore } from '../../src/adapters/memory/store.js';
import { redisGraphCheckpointStore } from '../../src/adapters/redis/graph-checkpoints.js';
import { RedisKeys } from '../../src/adapters/redis/keys.js';
import { RedisStore } from '../../src/adapters/redis/store.js';
import { graphKeysLeft } from '../support/graph-keys.js';
import { uniquePrefix, useRedis } from '../support/redis.js';
import { retentionContract } from './retention.contract.js';

const redis = useRedis();

retentionContract('memory', async (options) => {
  const graphCheckpoints = new MemoryGraphCheckpointStore();
  return { store: new MemoryStore({ ...options, graphCheckpoints }), graphCheckpoints };
});

retentionContract('redis', async (options) => {
  const client = redis.connect();
  const keyPrefix = uniquePrefix('retention');
  return {
    store: new RedisStore(client, { keyPrefix, ...options }),
    graphCheckpoints: redisGraphCheckpointStore(client, keyPrefix),
    graphKeysLeft: graphKeysLeft(client, new RedisKeys(keyPrefix)),
  };
});
