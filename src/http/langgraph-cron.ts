import { z } from 'zod';
import { badRequest } from '../domain/errors.js';
import type { JsonObject, Multitask, Schedule } from '../domain/types.js';
import type { Agent } from '../runtime/agent.js';
import { firesAt } from '../runtime/schedule-control.js';
import { RunCreateBody, type MultitaskStrategy } from './langgraph-run.js';
import { assistantIdOf } from './routes/langgraph-assistants.js';
import { JsonObjectSchema, Timestamp, WebhookUrlSchema } from './schemas.js';

/**
 * The wire shapes of the LangGraph Server API's crons (what `@langchain/langgraph-sdk`'s
 * `client.crons` sends and reads) and how an agentplane schedule is shown as a Cron: a cron is
 * a schedule, its id the schedule's, its thread the session every fire reuses.
 */

const IGNORED = 'accepted and ignored: a cron’s runs publish no stream chunks';

/** The run options a cron keeps for its fires, as a run creation takes them. */
const RunOptions = RunCreateBody.pick({ input: true, config: true, context: true, interrupt_before: true, interrupt_after: true }).extend({
  metadata: JsonObjectSchema.optional().meta({ description: "the cron's metadata, given to each of its runs" }),
  webhook: WebhookUrlSchema.optional(),
  on_run_completed: z.enum(['delete', 'keep']).optional().meta({ description: 'only `keep`: the threads of stateless crons are kept (and expire as sessions do)' }),
  enabled: z.boolean().optional().meta({ description: 'false: kept, but its ticks start nothing (default true)' }),
  stream_mode: RunCreateBody.shape.stream_mode.meta({ description: IGNORED }),
  stream_subgraphs: z.boolean().optional().meta({ description: IGNORED }),
  stream_resumable: z.boolean().optional().meta({ description: IGNORED }),
  durability: z.enum(['sync', 'async', 'exit']).optional().meta({ description: 'accepted and ignored: checkpoints are always written before the next step' }),
});

const CronExpression = z.string().max(200).meta({ description: 'a standard 5-field cron expression (400 invalid_cron otherwise)', example: '*/5 * * * *' });
const Timezone = z.string().max(64).meta({ description: 'IANA time zone the expression is read in', example: 'UTC' });
const EndTime = z.iso.datetime({ offset: true }).meta({ description: 'no tick after this time fires' });

/** `POST /runs/crons` and `POST /threads/{id}/runs/crons`. */
export const CronCreateBody = RunOptions.extend({
  assistant_id: z.string().min(1).meta({ description: 'the assistant id, or the graph (agent) id' }),
  schedule: CronExpression,
  timezone: Timezone.optional().meta({ default: 'UTC' }),
  end_time: EndTime.optional(),
  multitask_strategy: RunCreateBody.shape.multitask_strategy.meta({
    description: 'when a tick finds the thread’s run active: reject (the default: the tick is skipped), enqueue, interrupt, rollback (as interrupt)',
  }),
  checkpoint_during: z.boolean().optional().meta({ description: 'accepted and ignored: checkpoints are always written before the next step' }),
}).meta({ id: 'LangGraphCronCreate' });
export type CronCreate = z.infer<typeof CronCreateBody>;

/** `PATCH /runs/crons/{id}`: what is given replaces what the cron has; `metadata` is merged (null removes a key). */
export const CronUpdateBody = RunOptions.extend({
  schedule: CronExpression.optional(),
  timezone: Timezone.optional(),
  end_time: EndTime.nullable().optional().meta({ description: 'null removes the end' }),
}).meta({ id: 'LangGraphCronUpdate' });
export type CronUpdate = z.infer<typeof CronUpdateBody>;

export const CRON_FIELDS = [
  'cron_id',
  'assistant_id',
  'thread_id',
  'on_run_completed',
  'end_time',
  'schedule',
  'timezone',
  'created_at',
  'updated_at',
  'payload',
  'user_id',
  'next_run_date',
  'metadata',
  'enabled',
] as const;

export const CronSchema = z
  .object({
    cron_id: z.string().meta({ description: 'the schedule id' }),
    assistant_id: z.string(),
    thread_id: z.string().nullable().meta({ description: 'the thread every fire runs on; null for a stateless cron (a new thread each fire)' }),
    on_run_completed: z.literal('keep').nullable().meta({ description: 'keep for a stateless cron, null for a thread’s' }),
    end_time: Timestamp.nullable(),
    schedule: z.string(),
    timezone: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
    payload: JsonObjectSchema.meta({ description: 'what each fire’s run is started with' }),
    user_id: z.null().meta({ description: 'always null' }),
    next_run_date: Timestamp.nullable().meta({ description: 'its next tick; null when disabled or when that tick is past end_time' }),
    metadata: JsonObjectSchema,
    enabled: z.boolean(),
  })
  .meta({ id: 'LangGraphCron' });
export type Cron = z.infer<typeof CronSchema>;

/** A schedule as LangGraph's Cron. */
export function cronOf(schedule: Schedule): Cron {
  return {
    cron_id: schedule.id,
    assistant_id: assistantIdOf(schedule.agent_id),
    thread_id: schedule.new_session ? null : (schedule.session_id ?? null),
    on_run_completed: schedule.new_session ? 'keep' : null,
    end_time: schedule.end_time ?? null,
    schedule: schedule.cron_expr,
    timezone: schedule.timezone,
    created_at: schedule.created_at,
    updated_at: schedule.updated_at ?? schedule.created_at,
    payload: { ...(schedule.graph ?? { input: schedule.input }), ...(schedule.webhook ? { webhook: schedule.webhook } : {}) },
    user_id: null,
    next_run_date: firesAt(schedule, Date.parse(schedule.next_run)) ? schedule.next_run : null,
    metadata: schedule.metadata ?? {},
    enabled: schedule.enabled !== false,
  };
}

/** `multitask_strategy` as agentplane's multitask; rollback cancels as interrupt does (as for runs). */
const MULTITASK: Record<MultitaskStrategy, Multitask> = { reject: 'reject', enqueue: 'enqueue', interrupt: 'interrupt', rollback: 'interrupt' };

/** What a schedule keeps of a cron's run options: a graph's `graph` options, or a native agent's `input`. */
export type CronRun = Pick<Schedule, 'input' | 'graph'>;

/**
 * The run options of a cron for `agent`, `current` ones (an update) replaced by those `body`
 * gives. A graph agent's are its engine's options (with the strategy, as a run creation keeps
 * it; each fire adds the cron's metadata); a native agent takes an input object and none of a
 * graph's options. Throws `bad_request` for what agentplane does not support.
 */
export function cronRunOf(agent: Agent, body: CronCreate | CronUpdate, current?: Schedule): CronRun {
  if (body.on_run_completed === 'delete') {
    throw badRequest('on_run_completed: "delete" is not supported; the threads of stateless crons are kept (they expire as sessions do): send "keep".');
  }
  if (agent.graph) {
    const strategy = 'multitask_strategy' in body ? body.multitask_strategy : undefined;
    const given = definedOf({
      input: body.input,
      config: body.config && definedOf({ configurable: body.config.configurable, tags: body.config.tags, recursion_limit: body.config.recursion_limit, metadata: body.config.metadata }),
      context: body.context,
      interrupt_before: body.interrupt_before,
      interrupt_after: body.interrupt_after,
      multitask_strategy: strategy,
    });
    return { input: {}, graph: { multitask_strategy: 'reject', ...current?.graph, ...given } };
  }
  const graphOnly = (['context', 'interrupt_before', 'interrupt_after'] as const).find((key) => body[key] !== undefined);
  if (graphOnly) throw badRequest(`${graphOnly}: assistant "${agent.id}" is not a graph; its cron takes an input object only.`);
  const input = body.input;
  if (input === undefined || input === null) return { input: current?.input ?? {} };
  if (typeof input !== 'object' || Array.isArray(input)) throw badRequest(`input: assistant "${agent.id}" takes a JSON object as input.`);
  return { input: input as JsonObject };
}

/** The multitask of a cron's strategy (reject when none is given). */
export function multitaskOf(strategy: MultitaskStrategy | undefined): Multitask {
  return MULTITASK[strategy ?? 'reject'];
}

function definedOf<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
