import { isCluster, type RedisClient } from './connection.js';
import { RedisKeys } from './keys.js';
import { loadScripts, type ScriptCaller } from './scripts.js';

/** What the parts of the Redis Store share: one command connection, its keys and scripts. */
export interface RedisContext {
  readonly redis: RedisClient;
  readonly keys: RedisKeys;
  readonly script: ScriptCaller;
  /** True on a Redis Cluster: events are announced with sharded pub/sub. */
  readonly sharded: boolean;
  /**
   * The channel the publish scripts announce a tenant's events on: the tenant's shard channel
   * (in its slot) on a cluster, the one events channel otherwise.
   */
  announceChannel(tenant: string): string;
}

export function redisContext(redis: RedisClient, keyPrefix: string): RedisContext {
  const keys = new RedisKeys(keyPrefix);
  const sharded = isCluster(redis);
  const channel = keys.eventsChannel();
  return {
    redis,
    keys,
    script: loadScripts(redis),
    sharded,
    announceChannel: sharded ? (tenant) => keys.eventsShardChannel(tenant) : () => channel,
  };
}
