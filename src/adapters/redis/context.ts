import type { Redis } from 'ioredis';
import { RedisKeys } from './keys.js';
import { loadScripts, type ScriptCaller } from './scripts.js';

/** What the parts of the Redis Store share: one command connection, its keys and scripts. */
export interface RedisContext {
  readonly redis: Redis;
  readonly keys: RedisKeys;
  readonly script: ScriptCaller;
}

export function redisContext(redis: Redis, keyPrefix: string): RedisContext {
  return { redis, keys: new RedisKeys(keyPrefix), script: loadScripts(redis) };
}
