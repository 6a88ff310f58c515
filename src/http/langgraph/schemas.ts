import { z } from 'zod';
import { LANGGRAPH_RUN_STATUSES, MULTITASK_STRATEGIES, STREAM_MODES } from '../../langgraph-server/types.js';
import { JsonObjectSchema, Timestamp, WebhookUrlSchema } from '../schemas.js';

/**
 * The wire shapes of the LangGraph Server API's runs and crons (what `@langchain/langgraph-sdk`
 * sends and reads), validated here and described in the OpenAPI document; the services of
 * src/langgraph-server/ take what they read of them.
 */

const NodeList = z.union([z.literal('*'), z.array(z.string())]);
const GotoItem = z.union([z.string(), z.strictObject({ node: z.string(), input: z.unknown().optional() })]);

const CommandSchema = z
  .strictObject({
    resume: z.unknown().optional().meta({ description: "the answer to the thread's pending interrupt(s) (a map of interrupt id → answer answers each)" }),
    update: z.union([z.record(z.string(), z.unknown()), z.array(z.tuple([z.string(), z.unknown()]))]).optional(),
    goto: z.union([GotoItem, z.array(GotoItem)]).optional(),
  })
  .meta({ id: 'LangGraphCommand' });

/** The body of every run creation (`POST /threads/{id}/runs[/wait|/stream]`, `POST /runs/wait|stream`), as the SDK sends it. */
export const RunCreateBody = z
  .strictObject({
    assistant_id: z.string().min(1).meta({ description: 'the assistant id, or the graph (agent) id' }),
    input: z.unknown().optional().meta({ description: "the graph's input (a native agent's: an object)" }),
    command: CommandSchema.optional(),
    config: z
      .looseObject({
        tags: z.array(z.string()).optional(),
        recursion_limit: z.number().int().min(1).max(100_000).optional(),
        configurable: JsonObjectSchema.optional(),
        metadata: JsonObjectSchema.optional(),
      })
      .optional()
      .meta({ description: 'LangGraph run config: `configurable`, `tags`, `recursion_limit`, `metadata` (other keys are ignored)' }),
    context: z.unknown().optional(),
    metadata: JsonObjectSchema.optional().meta({ description: "the run's metadata (answered with the run)" }),
    stream_mode: z.union([z.enum(STREAM_MODES), z.array(z.enum(STREAM_MODES))]).optional().meta({ description: 'default `values` (streams); waits publish none unless asked' }),
    stream_subgraphs: z.boolean().optional(),
    stream_resumable: z.boolean().optional().meta({ description: 'accepted; every stream is resumable with Last-Event-ID' }),
    interrupt_before: NodeList.optional(),
    interrupt_after: NodeList.optional(),
    checkpoint_id: z.string().min(1).optional().meta({ description: 'run from this checkpoint of the thread (a fork)' }),
    checkpoint: z
      .looseObject({ checkpoint_id: z.string().optional(), checkpoint_ns: z.string().optional(), checkpoint_map: JsonObjectSchema.nullish() })
      .optional(),
    multitask_strategy: z.enum(MULTITASK_STRATEGIES).optional().meta({ description: 'when the thread has a pending or running run; default `reject` (409)' }),
    if_not_exists: z.enum(['reject', 'create']).optional().meta({ description: 'a thread that does not exist: 404 (`reject`, the default) or created' }),
    on_disconnect: z.enum(['cancel', 'continue']).optional().meta({ description: 'when the client of a wait or stream leaves first (default `continue`)' }),
    on_completion: z.enum(['delete', 'keep']).optional().meta({ description: 'stateless runs: delete the thread once the run stops (default) or keep it' }),
    after_seconds: z
      .number()
      .min(0)
      .max(86_400 * 30)
      .optional()
      .meta({ description: 'start the run no sooner than this many seconds from now (it stays `pending` until then; at most 30 days)' }),
    webhook: z.string().optional().meta({ description: 'POST the run to this http(s) URL when it ends (see Run webhooks in the HTTP contract)' }),
    feedback_keys: z.union([z.string(), z.array(z.string())]).optional().meta({ description: 'accepted and ignored (LangSmith)' }),
    langsmith_tracer: z.looseObject({}).optional().meta({ description: 'accepted and ignored (LangSmith)' }),
    strict_resume: z.boolean().optional().meta({ description: 'accepted and ignored' }),
    checkpoint_during: z.boolean().optional().meta({ description: 'accepted and ignored: checkpoints are always written before the next step' }),
    durability: z.enum(['sync', 'async', 'exit']).optional().meta({ description: 'accepted and ignored: checkpoints are always written before the next step' }),
  })
  .meta({ id: 'LangGraphRunCreate' });

export const LangGraphRunSchema = z
  .object({
    run_id: z.string(),
    thread_id: z.string(),
    assistant_id: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
    status: z.enum(LANGGRAPH_RUN_STATUSES),
    metadata: JsonObjectSchema,
    multitask_strategy: z.enum(MULTITASK_STRATEGIES),
    queue: z
      .object({ tenant_queued: z.number().int(), tenant_running: z.number().int(), workers: z.number().int() })
      .optional()
      .meta({ description: 'agentplane: a pending run’s tenant’s runs waiting for a worker slot, and running, and the workers alive (as GET /api/runs/{id})' }),
  })
  .meta({ id: 'LangGraphRun' });

const IGNORED = 'accepted and ignored: a cron’s runs publish no stream chunks';

/** The run options a cron keeps for its fires, as a run creation takes them. */
const RunOptions = RunCreateBody.pick({ input: true, config: true, context: true, interrupt_before: true, interrupt_after: true }).extend({
  metadata: JsonObjectSchema.optional().meta({ description: "the cron's metadata, given to each of its runs" }),
  webhook: WebhookUrlSchema.optional(),
  on_run_completed: z
    .enum(['delete', 'keep'])
    .optional()
    .meta({ description: 'a stateless cron’s threads: `delete` (the default) each once its run stops, or `keep` them (those of its last 100 fires); ignored for a thread’s cron' }),
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

/** `PATCH /runs/crons/{id}`: what is given replaces what the cron has; `metadata` is merged (null removes a key). */
export const CronUpdateBody = RunOptions.extend({
  schedule: CronExpression.optional(),
  timezone: Timezone.optional(),
  end_time: EndTime.nullable().optional().meta({ description: 'null removes the end' }),
}).meta({ id: 'LangGraphCronUpdate' });

export const CronSchema = z
  .object({
    cron_id: z.string().meta({ description: 'the schedule id' }),
    assistant_id: z.string(),
    thread_id: z.string().nullable().meta({ description: 'the thread every fire runs on; null for a stateless cron (a new thread each fire)' }),
    on_run_completed: z.enum(['delete', 'keep']).nullable().meta({ description: 'what becomes of a stateless cron’s threads; null for a thread’s cron' }),
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
