import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

/** Lua scripts of the Redis adapters, each in `lua/<verbNoun>-<numKeys>.lua`. */
const SCRIPT_FILES = [
  'appendCheckpoint-3',
  'createRun-5',
  'updateRun-2',
  'createApproval-3',
  'decideApproval-3',
] as const;

export type ScriptName = (typeof SCRIPT_FILES)[number] extends `${infer N}-${string}` ? N : never;

type ScriptFn = (...args: (string | number)[]) => Promise<unknown>;

/**
 * Registers the scripts on a client with `defineCommand` (EVALSHA with an EVAL fallback)
 * and returns a typed caller. Idempotent per client.
 */
export function loadScripts(redis: Redis): (name: ScriptName, keys: string[], args: (string | number)[]) => Promise<unknown[]> {
  const commands = redis as unknown as Record<string, ScriptFn>;
  for (const file of SCRIPT_FILES) {
    const [name, numKeys] = file.split('-') as [string, string];
    if (typeof commands[name] === 'function') continue;
    const lua = readFileSync(new URL(`./lua/${file}.lua`, import.meta.url), 'utf8');
    redis.defineCommand(name, { numberOfKeys: Number(numKeys), lua });
  }
  return async (name, keys, args) => (await commands[name]!(...keys, ...args)) as unknown[];
}
