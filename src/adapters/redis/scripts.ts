import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

/** Lua scripts of the Redis adapters, each in `lua/<verbNoun>-<numKeys>.lua`. */
const SCRIPT_FILES = [
  'appendCheckpoint-3',
  'listSessions-1',
  'createRun-7',
  'updateRun-2',
  'createApproval-4',
  'decideApproval-4',
  'beginScheduleFire-4',
  'updateScheduleFire-2',
  'deleteSchedule-5',
] as const;

export type ScriptName = (typeof SCRIPT_FILES)[number] extends `${infer N}-${string}` ? N : never;

type ScriptFn = (...args: (string | number)[]) => Promise<unknown>;

/** Reads a script, replacing each `--@include <name>` line with `lua/includes/<name>.lua`. */
function readScript(file: string): string {
  const read = (path: string) => readFileSync(new URL(`./lua/${path}.lua`, import.meta.url), 'utf8');
  return read(file).replace(/^--@include (\w+)$/m, (_line, name: string) => read(`includes/${name}`));
}

/**
 * Registers the scripts on a client with `defineCommand` (EVALSHA with an EVAL fallback)
 * and returns a typed caller. Idempotent per client.
 */
export function loadScripts(redis: Redis): (name: ScriptName, keys: string[], args: (string | number)[]) => Promise<unknown[]> {
  const commands = redis as unknown as Record<string, ScriptFn>;
  for (const file of SCRIPT_FILES) {
    const [name, numKeys] = file.split('-') as [string, string];
    if (typeof commands[name] === 'function') continue;
    redis.defineCommand(name, { numberOfKeys: Number(numKeys), lua: readScript(file) });
  }
  return async (name, keys, args) => (await commands[name]!(...keys, ...args)) as unknown[];
}
