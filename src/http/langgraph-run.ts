import { z } from 'zod';
import { TIMEOUT_ERROR, type Run } from '../domain/types.js';
import { assistantIdOf } from './routes/langgraph-assistants.js';
import { JsonObjectSchema, Timestamp } from './schemas.js';

/**
 * The wire shapes of the LangGraph Server API's runs (what `@langchain/langgraph-sdk` sends and
 * reads): the body that creates a run, the Run, and how an agentplane run is shown as one.
 */

/** Stream modes a run can be asked for; `events` and `tools` are refused (400). */
export const STREAM_MODES = ['values', 'updates', 'messages', 'messages-tuple', 'custom', 'debug', 'tasks', 'checkpoints'] as const;
export type StreamMode = (typeof STREAM_MODES)[number];

export const MULTITASK_STRATEGIES = ['reject', 'interrupt', 'rollback', 'enqueue'] as const;
export type MultitaskStrategy = (typeof MULTITASK_STRATEGIES)[number];

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

export type RunCreate = z.infer<typeof RunCreateBody>;

export const LANGGRAPH_RUN_STATUSES = ['pending', 'running', 'error', 'success', 'timeout', 'interrupted'] as const;
export type LangGraphRunStatus = (typeof LANGGRAPH_RUN_STATUSES)[number];

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
  })
  .meta({ id: 'LangGraphRun' });

/**
 * A run's LangGraph status: queued → pending, running → running, paused at an approval →
 * interrupted, completed → success, failed → error, cancelled → interrupted (timeout when its
 * deadline cancelled it).
 */
export function langgraphStatusOf(run: Pick<Run, 'status' | 'error'>): LangGraphRunStatus {
  switch (run.status) {
    case 'queued':
      return 'pending';
    case 'running':
      return 'running';
    case 'completed':
      return 'success';
    case 'failed':
      return 'error';
    case 'cancelled':
      return run.error === TIMEOUT_ERROR ? 'timeout' : 'interrupted';
    case 'interrupted':
      return 'interrupted';
  }
}

/** The run's statuses a LangGraph status stands for (a filter of the runs list). */
export function statusesOf(status: LangGraphRunStatus): (run: Run) => boolean {
  return (run) => langgraphStatusOf(run) === status;
}

/** What a LangGraph run keeps beside the engine's options in its stored input: its metadata and strategy. */
export interface RunRecord {
  metadata?: Record<string, unknown>;
  multitask_strategy?: MultitaskStrategy;
}

/** The stored `graph_input` of a run as a {@link RunRecord} (a native agent's run has none). */
export function recordOf(graphInput: string | null): RunRecord {
  if (graphInput === null) return {};
  const parsed = JSON.parse(graphInput) as RunRecord;
  return { metadata: parsed.metadata, multitask_strategy: parsed.multitask_strategy };
}

/** An agentplane run as LangGraph's Run. */
export function runJsonOf(run: Run, record: RunRecord): z.infer<typeof LangGraphRunSchema> {
  return {
    run_id: run.id,
    thread_id: run.session_id,
    assistant_id: assistantIdOf(run.agent_id),
    created_at: run.created_at,
    updated_at: run.updated_at,
    status: langgraphStatusOf(run),
    metadata: record.metadata ?? {},
    multitask_strategy: record.multitask_strategy ?? 'reject',
  };
}
