import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isCluster, type RedisClient } from './connection.js';
import { AppError, conflict, idempotencyKeyReused, idempotentRunGone, notFound, stateTooLarge, stateTooManyKeys } from '../../domain/errors.js';
import { MAX_SESSION_METADATA_BYTES, metadataTooLarge } from '../../domain/session-metadata.js';
import { ACTIVE_RUN_STATUSES, EVENT_COUNT_SLACK_DIVISOR, FINAL_FIRE_STATUSES } from '../../domain/types.js';
import { graphStateTooLarge, graphThreadGone } from '../shared/graph-limits.js';
import { MAX_INDEXED_PAIR_BYTES, MAX_INDEXED_PAIRS } from '../../domain/metadata-pairs.js';

/** Lua scripts of the Redis adapters, each in `lua/<verbNoun>-<numKeys>.lua`. */
const SCRIPT_FILES = [
  'appendCheckpoint-4',
  'readCheckpoint-3',
  'readSessionsLatest-1',
  'listSessions-1',
  'listThreads-1',
  'createSession-3',
  'updateSessionMetadata-3',
  'deleteSession-20',
  'createRun-14',
  'updateRun-7',
  'deleteRun-6',
  'promoteRun-6',
  'createApproval-6',
  'decideApproval-6',
  'beginScheduleFire-4',
  'updateScheduleFire-2',
  'createSchedule-2',
  'deleteSchedule-5',
  'updateSchedule-1',
  'publishEvent-3',
  'beginRun-8',
  'stepRun-12',
  'putGraphCheckpoint-8',
  'putGraphWrites-4',
  'readGraphCheckpoints-5',
  'deleteGraphCheckpoints-6',
  'putGraphItem-5',
  'deleteGraphItem-5',
  'scanGraphItems-2',
  'createAssistant-4',
  'changeAssistant-4',
  'deleteAssistant-4',
  'indexSessionsMetadata-2',
  'enqueueRun-10',
  'admitRuns-10',
  'releaseRun-11',
  'withdrawRun-10',
  'reconcileRuns-10',
  'readAgentSlots-10',
  'handRuns-2',
  'holdLease-1',
  'dropLease-1',
] as const;

export type ScriptName = (typeof SCRIPT_FILES)[number] extends `${infer N}-${string}` ? N : never;

/**
 * Failure codes a script answers with, as the first element of its reply (success replies
 * start with 0 or more). One table for every script, so each code means one thing everywhere
 * and one function ({@link scriptError}) turns it into the AppError of the port.
 */
export const SCRIPT_CODES = {
  /** The subject of the script (session, checkpoint, run, approval) does not exist. */
  NOT_FOUND: -1,
  /** The latest checkpoint's seq_num is not the expected one (If-Match). */
  SEQ_MISMATCH: -3,
  /** The session's current run is running. */
  RUN_RUNNING: -4,
  /** The session has an active (queued, running, interrupted) run. */
  SESSION_BUSY: -5,
  /** The session belongs to another agent; the reply's second element names it. */
  OTHER_AGENT: -6,
  /** The run's status is not one the update allows; the reply's second element is the status. */
  RUN_STATUS: -7,
  /** The approval request was decided already. */
  DECIDED: -8,
  /** The merged state would be larger than SERVICE_MAX_STATE_BYTES. */
  STATE_TOO_LARGE: -9,
  /** The merged state would have more keys than SERVICE_MAX_STATE_KEYS. */
  STATE_TOO_MANY_KEYS: -10,
  /** The Idempotency-Key was stored for a start with other fields. */
  IDEMPOTENCY_MISMATCH: -11,
  /** The run the Idempotency-Key started no longer exists. */
  IDEMPOTENT_RUN_GONE: -12,
  /** The session to create exists. */
  SESSION_EXISTS: -13,
  /** The session's metadata would pass MAX_SESSION_METADATA_BYTES; the reply's second element is its JSON size. */
  METADATA_TOO_LARGE: -14,
  /** A LangGraph checkpoint's whole state would pass SERVICE_MAX_STATE_BYTES; the reply's second and third elements are its size and the cap. */
  GRAPH_STATE_TOO_LARGE: -15,
  /** A LangGraph write names a thread whose session is gone; the reply's second element is the thread id. */
  THREAD_GONE: -16,
} as const;

/**
 * States with more keys than this are never read in one command (it would hold Redis for
 * O(state)): readers scan them in chunks.
 */
export const SMALL_STATE_KEYS = 2_000;

/** Largest state (JSON bytes) a waited run's end announcement carries (StoredEvent.stop); above it the waiter reads it back. */
export const STOP_STATE_BYTES = 65_536;

/** State keys a script reads or writes per HMGET/HSET when it applies a patch (within Lua's unpack limit). */
export const PATCH_BATCH = 500;

/** Prefix of the session hash's metadata fields (the key as JSON follows): includes/sessionMetadata.lua. */
export const METADATA_FIELD = 'meta:';

/** What a NOT_FOUND of each script names, in the error message. */
const NOT_FOUND_SUBJECT: Partial<Record<ScriptName, string>> = {
  appendCheckpoint: 'A checkpoint of this session',
  deleteSession: 'The session',
  updateSessionMetadata: 'The session',
  updateRun: 'The run',
  deleteRun: 'The run',
  decideApproval: 'The approval request',
};

/** The AppError of a script's failure code: the one mapping of Lua replies to the port's errors. */
export function scriptError(script: ScriptName, reply: readonly unknown[]): AppError {
  const detail = String(reply[1] ?? '');
  switch (Number(reply[0])) {
    case SCRIPT_CODES.NOT_FOUND:
      return notFound(NOT_FOUND_SUBJECT[script] ?? 'The resource');
    case SCRIPT_CODES.SEQ_MISMATCH:
      return new AppError('precondition_failed', 'The latest checkpoint has another seq_num than If-Match names.');
    case SCRIPT_CODES.RUN_RUNNING:
      return conflict('A run of this session is running; patch it once the run is paused or finished.');
    case SCRIPT_CODES.SESSION_BUSY:
      return script === 'deleteSession'
        ? conflict('The session has a queued, running or interrupted run; cancel it or let it finish first.')
        : conflict('This session already has a queued, running or interrupted run.');
    case SCRIPT_CODES.OTHER_AGENT:
      return conflict(`This session belongs to agent "${detail}".`);
    case SCRIPT_CODES.RUN_STATUS:
      return conflict(`The run is ${detail}.`);
    case SCRIPT_CODES.DECIDED:
      return conflict('The approval request was already decided.');
    case SCRIPT_CODES.STATE_TOO_LARGE:
      return stateTooLarge();
    case SCRIPT_CODES.STATE_TOO_MANY_KEYS:
      return stateTooManyKeys();
    case SCRIPT_CODES.IDEMPOTENCY_MISMATCH:
      return idempotencyKeyReused();
    case SCRIPT_CODES.IDEMPOTENT_RUN_GONE:
      return idempotentRunGone();
    case SCRIPT_CODES.SESSION_EXISTS:
      return conflict('The session already exists.');
    case SCRIPT_CODES.METADATA_TOO_LARGE:
      return metadataTooLarge(Number(detail));
    case SCRIPT_CODES.GRAPH_STATE_TOO_LARGE:
      return graphStateTooLarge(Number(detail), Number(reply[2]));
    case SCRIPT_CODES.THREAD_GONE:
      return graphThreadGone(detail);
    default:
      return new AppError('internal', `Script ${script} answered the unknown code ${String(reply[0])}.`, { expose: false });
  }
}

/** Lua set of names, `{ a = true, b = true }`. */
const luaSet = (names: readonly string[]) => `{ ${names.map((n) => `[${JSON.stringify(n)}] = true`).join(', ')} }`;

/**
 * Includes generated from TypeScript, so a rule has one source: the domain's status sets and
 * the failure codes above.
 */
const GENERATED_INCLUDES: Record<string, (options: ScriptOptions) => string> = {
  constants: () =>
    [
      '-- Generated by scripts.ts from domain/types.ts and SCRIPT_CODES; do not edit a copy.',
      `local ACTIVE_RUN_STATUS = ${luaSet(ACTIVE_RUN_STATUSES)}`,
      `local FINAL_FIRE_STATUS = ${luaSet(FINAL_FIRE_STATUSES)}`,
      `local SMALL_STATE_KEYS = ${SMALL_STATE_KEYS}`,
      `local PATCH_BATCH = ${PATCH_BATCH}`,
      `local STOP_STATE_BYTES = ${STOP_STATE_BYTES}`,
      `local MAX_SESSION_METADATA_BYTES = ${MAX_SESSION_METADATA_BYTES}`,
      `local METADATA_FIELD = ${JSON.stringify(METADATA_FIELD)}`,
      `local MAX_INDEXED_PAIRS = ${MAX_INDEXED_PAIRS}`,
      `local MAX_INDEXED_PAIR_BYTES = ${MAX_INDEXED_PAIR_BYTES}`,
      ...Object.entries(SCRIPT_CODES).map(([name, code]) => `local ${name} = ${code}`),
    ].join('\n'),
  // Classic pub/sub on one server; on a cluster sharded pub/sub, on the channel in the tenant's
  // slot (a script may SPUBLISH there), so an announcement reaches one shard, not every node.
  announce: (options) => `local ANNOUNCE = '${options.sharded ? 'SPUBLISH' : 'PUBLISH'}'`,
  bullAddStandardJob,
  eventCaps: () => `local EVENT_COUNT_SLACK_DIVISOR = ${EVENT_COUNT_SLACK_DIVISOR}`,
};

/**
 * The names of BullMQ's keys of a queue that its addStandardJob script takes, in its order: each
 * key is the queue's prefix (`queue.toKey('')`) and its name.
 */
const BULL_ADD_KEYS = ['wait', 'paused', 'meta', 'id', 'completed', 'delayed', 'active', 'events', 'marker'] as const;

/**
 * BullMQ's own script that adds a job to a queue (`addStandardJob`, its includes resolved), from
 * the BullMQ this package runs with, and the names of its keys (BULL_ADD_KEYS): the admission
 * scripts add the jobs they admit with it, in the same step (includes/admitRuns.lua `hand`), so
 * an admitted job reaches BullMQ as BullMQ itself would add it, whichever version is installed.
 * Read from the package's generated scripts, which its exports do not name (CommonJS, hence
 * `require`).
 */
let bullAdd: string | undefined;
function bullAddStandardJob(): string {
  if (bullAdd !== undefined) return bullAdd;
  const { addStandardJob } = createRequire(import.meta.url)('bullmq/dist/cjs/scripts/addStandardJob-9.js') as { addStandardJob: { content: string; keys: number } };
  // The admission scripts give it these keys: another count is another script, which this one cannot call.
  if (addStandardJob.keys !== BULL_ADD_KEYS.length) throw new Error(`BullMQ's addStandardJob takes ${addStandardJob.keys} keys, not the ${BULL_ADD_KEYS.length} the admission scripts give it.`);
  // A function whose parameters stand for the script's KEYS and ARGV: its body is BullMQ's script as is.
  return (bullAdd = [
    `local BULL_ADD_KEYS = {${BULL_ADD_KEYS.map((name) => `'${name}'`).join(', ')}}`,
    `local function bull_add_standard_job(KEYS, ARGV)\n${addStandardJob.content}\nend`,
  ].join('\n'));
}

/** How scripts are generated for a client. */
export interface ScriptOptions {
  /** Announce events with SPUBLISH (a Redis Cluster) instead of PUBLISH. @defaultValue false */
  sharded?: boolean;
}

const INCLUDE = /^--@include (\w+)$/gm;

/**
 * Reads a script, replacing every `--@include <name>` line with the include of that name
 * (an include may include others).
 */
export function readScript(file: string, options: ScriptOptions = {}): string {
  const read = (path: string) => readFileSync(new URL(`./lua/${path}.lua`, import.meta.url), 'utf8');
  const expand = (text: string): string =>
    text.replace(INCLUDE, (_line, name: string) => GENERATED_INCLUDES[name]?.(options) ?? expand(read(`includes/${name}`)));
  return expand(read(file));
}

/** An argument of a script: a Buffer goes as its bytes. */
export type ScriptArg = string | number | Buffer;

type ScriptFn = (...args: (ScriptArg[] | ScriptArg)[]) => Promise<unknown>;

/** Calls a script by name; a reply whose first element is a failure code rejects with its AppError. */
export type ScriptCaller = <T = unknown[]>(name: ScriptName, keys: string[], args: ScriptArg[]) => Promise<T>;

/**
 * Registers the scripts on a client with `defineCommand` (EVALSHA with an EVAL fallback)
 * and returns a typed caller. Idempotent per client.
 */
export function loadScripts(redis: RedisClient): ScriptCaller {
  const commands = redis as unknown as Record<string, ScriptFn>;
  const options = { sharded: isCluster(redis) };
  for (const file of SCRIPT_FILES) {
    const [name, numKeys] = file.split('-') as [string, string];
    if (typeof commands[name] === 'function') continue;
    redis.defineCommand(name, { numberOfKeys: Number(numKeys), lua: readScript(file, options) });
  }
  return async <T>(name: ScriptName, keys: string[], args: ScriptArg[]): Promise<T> => {
    // One array argument (ioredis flattens it): a state of many keys must not spread into the call stack.
    const reply = await commands[name]!.call(redis, [...keys, ...args]);
    if (Array.isArray(reply) && typeof reply[0] === 'number' && reply[0] < 0) throw scriptError(name, reply);
    return reply as T;
  };
}
