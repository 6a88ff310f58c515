import type { StorageLimits } from '../../ports/store.js';
import type { ScriptName } from './scripts.js';

/**
 * The ARGV of the Lua scripts with many arguments, each declared once here: its fields by name
 * in the order the script reads them (the first is ARGV[1]). A caller passes a record
 * (`{ runId, nowMs, … }`) and {@link ScriptArgs.encode} lays it out, so no position is written
 * by hand in TypeScript; a new field is one line here, and its `ARGV[n]` in the script (its
 * header documents each position; test/unit/lua-scripts.test.ts checks the script reads as
 * many as are declared). What varies in length (state pairs, metadata pairs) follows the fields.
 */

/** One argument: a boolean is sent as '1' or '0', what the scripts compare against. */
export type ScriptArg = string | number | boolean;

export class ScriptArgs<F extends string> {
  constructor(
    readonly fields: readonly F[],
    /** Whether variable arguments (pairs) follow the fields, from ARGV[fields.length + 1] on. */
    readonly rest: boolean,
  ) {}

  /** The ARGV position (1-based) of a field, as the script reads it. */
  position(field: F): number {
    return this.fields.indexOf(field) + 1;
  }

  /** The ARGV of a call: the fields in their declared order, then `rest`. */
  encode(values: Readonly<Record<F, ScriptArg>>, rest: readonly (string | number)[] = []): (string | number)[] {
    if (rest.length > 0 && !this.rest) throw new Error(`The script takes no arguments after its ${this.fields.length} fields.`);
    const args = this.fields.map((field): string | number => {
      const value: ScriptArg = values[field];
      return typeof value === 'boolean' ? (value ? '1' : '0') : value;
    });
    // Pushed one by one: a state of many keys must not spread into a call's arguments.
    for (const arg of rest) args.push(arg);
    return args;
  }
}

/** Declares a script's fields; `rest` when pairs follow them. */
const argv = <const F extends readonly string[]>(names: F, options: { rest?: boolean } = {}) => new ScriptArgs<F[number]>(names, options.rest ?? false);

/** The limits a checkpoint is appended under, in the order every writing script takes them. */
const STATE_LIMITS = ['maxStateBytes', 'maxStateKeys', 'checkpointsRetain'] as const;

export type StateLimitArgs = Pick<StorageLimits, (typeof STATE_LIMITS)[number]>;

/**
 * The declarations, by script. `now` is an RFC 3339 time, `nowMs` the same in ms; prefixes are
 * the key prefixes of keys.ts the script appends ids to.
 */
export const SCRIPT_ARGS = {
  appendCheckpoint: argv(
    [
      'sessionId',
      'checkpointId',
      'nodeId',
      'now',
      'nowMs',
      'ifSeq',
      'rejectWhileRunning',
      ...STATE_LIMITS,
      'withState',
      'runId',
    ],
    { rest: true },
  ),
  createRun: argv(
    [
      'sessionId',
      'agentId',
      'runId',
      'now',
      'nowMs',
      'startNode',
      'checkpointId',
      ...STATE_LIMITS,
      'runsRetain',
      'runPrefix',
      'approvalPrefix',
      'deadlineAt',
      'behind',
      'maxQueuedBehind',
      'runIndexPrefix',
      'waited',
      'fingerprint',
      'idempotencyTtlMs',
      'graphInput',
      'metadataArgs',
    ],
    { rest: true },
  ),
  updateRun: argv([
    'status',
    'error',
    'now',
    'from',
    'runId',
    'sessionId',
    'nowMs',
    'by',
    'approvalPrefix',
    'runIndexPrefix',
    'sessionApprovals',
  ]),
  promoteRun: argv([
    'now',
    'nowMs',
    'checkpointId',
    ...STATE_LIMITS,
    'runPrefix',
    'sessionId',
    'runIndexPrefix',
  ]),
  decideApproval: argv([
    'status',
    'comment',
    'decidedBy',
    'decidedAt',
    'runId',
    'nowMs',
    'runIndexPrefix',
    'waited',
    'resume',
  ]),
  beginRun: argv([
    'runId',
    'now',
    'nowMs',
    'eventsRetain',
    'channel',
    'tenantJson',
    'eventTail',
    'runIndexPrefix',
    'eventsMaxBytes',
    'eventsRunMaxBytes',
  ]),
  stepRun: argv(
    [
      'sessionId',
      'runId',
      'checkpointId',
      'nextNode',
      'now',
      'nowMs',
      ...STATE_LIMITS,
      'spansRetain',
      'eventsRetain',
      'channel',
      'tenantJson',
      'spans',
      'nodeEnds',
      'nextEvents',
      'rootSpan',
      'runIndexPrefix',
      'eventsMaxBytes',
      'eventsRunMaxBytes',
    ],
    { rest: true },
  ),
  createAssistant: argv(['assistantId', 'assistant', 'version', 'maxPerTenant', 'graphId', 'maxTenantBytes']),
  changeAssistant: argv(['assistantId', 'assistant', 'version', 'versions', 'maxVersions', 'graphId', 'maxTenantBytes']),
} satisfies Partial<Record<ScriptName, ScriptArgs<string>>>;
