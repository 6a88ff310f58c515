import type { RedisClient } from '../../src/adapters/redis/connection.js';
import type { RedisKeys } from '../../src/adapters/redis/keys.js';

/**
 * How many Redis keys of a LangGraph thread exist: the keys of `keys.graphThread` plus its
 * entry in `keys.graphThreads` (0 once the thread is gone). One EXISTS: the keys share the
 * tenant's hash tag, so this works on a cluster too.
 */
export function graphKeysLeft(client: RedisClient, keys: RedisKeys) {
  return async (tenant: string, threadId: string): Promise<number> => {
    const existing = await client.exists(...Object.values(keys.graphThread(tenant, threadId)));
    const indexed = (await client.zscore(keys.graphThreads(tenant), threadId)) === null ? 0 : 1;
    return existing + indexed;
  };
}
