import { randomUUID } from 'node:crypto';
import { validate } from '@langchain/langgraph-checkpoint-validation';
import { redisGraphCheckpointStore } from '../../src/adapters/redis/graph-checkpoints.js';
import { AgentplaneCheckpointSaver } from '../../src/langgraph/checkpoint-saver.js';
import { uniquePrefix, useRedis } from '../support/redis.js';
import { exposeVitestGlobals } from './validation-globals.js';

exposeVitestGlobals();

const redis = useRedis();
const keyPrefix = uniquePrefix('lg-validation');

// LangGraph's own suite, unfiltered, on a real Redis; each checkpointer is a new tenant.
validate({
  checkpointerName: 'agentplane-redis',
  createCheckpointer: () => new AgentplaneCheckpointSaver({ tenant: `t-${randomUUID()}`, storage: redisGraphCheckpointStore(redis.connect(), keyPrefix) }),
});
