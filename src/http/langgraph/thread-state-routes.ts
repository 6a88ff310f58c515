import { z } from 'zod';
import { badRequest } from '../../domain/errors.js';
import type { JsonObject } from '../../domain/types.js';
import { readLatestThreadStateText, readThreadHistory, readThreadState, threadSession, updateThreadState, type ThreadStateDeps } from '../../langgraph-server/thread-state.js';
import type { AnyRoute } from '../route.js';
import { IdParam, JsonObjectSchema, Timestamp } from '../schemas.js';
import { defineLangGraphRoute, langgraphErrors } from './define.js';

const CheckpointRefSchema = z
  .object({
    thread_id: z.string(),
    checkpoint_ns: z.string(),
    checkpoint_id: z.string().nullable().meta({ description: "LangGraph's checkpoint id; a native agent's: the seq_num" }),
    checkpoint_map: JsonObjectSchema.nullable(),
  })
  .meta({ id: 'ThreadCheckpoint' });

const TaskSchema = z.object({
  id: z.string(),
  name: z.string(),
  error: z.string().nullable(),
  interrupts: z.array(z.unknown()).meta({ description: 'each `{ id, value }`: answer with a run whose command resumes it' }),
  path: z.unknown().optional(),
  checkpoint: z
    .object({ thread_id: z.string(), checkpoint_ns: z.string(), checkpoint_id: z.string().optional(), checkpoint_map: JsonObjectSchema.optional() })
    .nullable()
    .meta({ description: "a subgraph task's checkpoint: its namespace (read or edit the subgraph's state with it)" }),
  state: JsonObjectSchema.nullable().meta({ description: "a subgraph task's state (subgraphs=true)" }),
  result: z.unknown(),
});

export const ThreadStateSchema = z
  .object({
    values: JsonObjectSchema,
    next: z.array(z.string()),
    tasks: z.array(TaskSchema),
    metadata: JsonObjectSchema,
    created_at: Timestamp.nullable(),
    checkpoint: CheckpointRefSchema.nullable(),
    parent_checkpoint: CheckpointRefSchema.nullable(),
  })
  .meta({ id: 'ThreadState', description: 'every field unless `select` names some' });

const ThreadParams = z.object({ thread_id: IdParam.meta({ description: 'thread id (the session id)' }) });

/** A checkpoint as a body names it; a subgraph's (a namespace) is read through its parent's state. */
const CheckpointBody = z
  .object({
    thread_id: z.string().optional(),
    // null as the SDK's Checkpoint type allows: the latest (of the namespace).
    checkpoint_id: z.string().min(1).nullish().transform((v) => v ?? undefined),
    checkpoint_ns: z.string().max(1000).nullish().meta({ description: 'the root graph\'s ("", the default) or a subgraph\'s (a task\'s checkpoint_ns)' }),
    checkpoint_map: JsonObjectSchema.nullish(),
  })
  .meta({ description: 'a checkpoint of the thread (its checkpoint_id)' });

const SELECT_HINT = 'fields of the state: values, next, tasks, checkpoint, metadata, created_at, parent_checkpoint, or values.<key>';
const SelectBody = z.array(z.string().min(1)).min(1).optional().meta({ description: SELECT_HINT });
const asList = (value: string | string[] | undefined) => (value === undefined ? undefined : Array.isArray(value) ? value : [value]);
const StateQuery = z.object({
  subgraphs: z.enum(['true', 'false']).optional().transform((v) => v === 'true').meta({ description: 'with the states of subgraph tasks' }),
  // Repeated (`select=a&select=b`, as the SDK sends it) or once.
  select: z
    .union([z.string().min(1), z.array(z.string().min(1))])
    .optional()
    .transform(asList)
    .meta({ type: ['string', 'array'], items: { type: 'string', minLength: 1 }, description: SELECT_HINT }),
});

/** `state` with only the fields `select` names (`values.<key>`: that key of the values). */
function selected(state: JsonObject, select: readonly string[] | undefined): JsonObject {
  if (!select) return state;
  const out: JsonObject = {};
  for (const field of select) {
    if (field.startsWith('values.')) {
      const key = field.slice('values.'.length);
      const values = (out.values ?? {}) as JsonObject;
      if (Object.hasOwn(state.values as JsonObject, key)) values[key] = (state.values as JsonObject)[key];
      out.values = values;
    } else if (Object.hasOwn(state, field)) {
      out[field] = state[field];
    }
  }
  return out;
}

/** The checkpoint id a `before` names: an id, or a config or checkpoint holding one. */
const BeforeBody = z
  .union([
    z.string().min(1),
    z.object({ checkpoint_id: z.string().min(1).optional(), configurable: z.object({ checkpoint_id: z.string().min(1).optional() }).loose().optional() }).loose(),
  ])
  .transform((v) => (typeof v === 'string' ? v : (v.configurable?.checkpoint_id ?? v.checkpoint_id)))
  .optional()
  .meta({ description: 'only states older than this checkpoint (its id, or a config holding it)' });

/** GET and POST a thread's state (latest, at a checkpoint), update it, and its history. */
export function langgraphThreadStateRoutes(deps: ThreadStateDeps): AnyRoute[] {
  const one = langgraphErrors(400, 401, 403, 404, 429);
  const posted = langgraphErrors(400, 401, 403, 404, 413, 415, 429);
  return [
    defineLangGraphRoute({
      method: 'GET',
      path: '/threads/:thread_id/state',
      operationId: 'getThreadState',
      summary: "The thread's latest state (empty before anything wrote it)",
      params: ThreadParams,
      query: StateQuery,
      responses: { 200: { description: 'The state', schema: ThreadStateSchema.partial() }, ...one },
      handler: async ({ params, query, principal }) => {
        // A graph thread's version is read beside its session: one round trip, not two.
        const version = query.subgraphs ? undefined : deps.graphs?.readVersion(principal.tenant, params.thread_id);
        version?.catch(() => undefined);
        const session = await threadSession(deps, principal.tenant, params.thread_id);
        if (!query.subgraphs && !query.select) {
          // The latest state as its JSON was kept: sent as it is, not parsed and serialized again.
          return { status: 200, body: await readLatestThreadStateText(deps, principal.tenant, session, version), headers: { 'Content-Type': 'application/json; charset=utf-8' } };
        }
        return { status: 200, body: selected(await readThreadState(deps, principal.tenant, session, { subgraphs: query.subgraphs, ...(version ? { version } : {}) }), query.select) };
      },
    }),
    defineLangGraphRoute({
      method: 'GET',
      path: '/threads/:thread_id/state/:checkpoint_id',
      operationId: 'getThreadStateAt',
      summary: "The thread's state at one of its checkpoints",
      params: ThreadParams.extend({ checkpoint_id: z.string().min(1) }),
      query: StateQuery,
      responses: { 200: { description: 'The state', schema: ThreadStateSchema.partial() }, ...one },
      handler: async ({ params, query, principal }) => {
        const session = await threadSession(deps, principal.tenant, params.thread_id);
        const state = await readThreadState(deps, principal.tenant, session, { checkpointId: params.checkpoint_id, subgraphs: query.subgraphs });
        return { status: 200, body: selected(state, query.select) };
      },
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/threads/:thread_id/state/checkpoint',
      operationId: 'getThreadStateAtCheckpoint',
      summary: "The thread's state at the checkpoint the body names (the latest without one)",
      readOnly: true,
      params: ThreadParams,
      body: z.strictObject({ checkpoint: CheckpointBody.nullish(), subgraphs: z.boolean().optional(), select: SelectBody }),
      bodyExamples: { latest: { summary: 'the latest state', value: { checkpoint: null } } },
      responses: { 200: { description: 'The state', schema: ThreadStateSchema.partial() }, ...posted },
      handler: async ({ params, body, principal }) => {
        const session = await threadSession(deps, principal.tenant, params.thread_id);
        const state = await readThreadState(deps, principal.tenant, session, {
          checkpointId: body.checkpoint?.checkpoint_id,
          ...(body.checkpoint?.checkpoint_ns ? { checkpointNs: body.checkpoint.checkpoint_ns } : {}),
          subgraphs: body.subgraphs,
        });
        return { status: 200, body: selected(state, body.select) };
      },
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/threads/:thread_id/state',
      operationId: 'updateThreadState',
      summary: "Update the thread's state: through the graph (as_node, from a checkpoint), or merged into a native agent's",
      params: ThreadParams,
      body: z.strictObject({
        values: JsonObjectSchema.nullish().meta({ description: "the update, applied through the graph's reducers (a native agent's: shallow-merged)" }),
        as_node: z.string().min(1).optional().meta({ description: 'the node the update is written as (graph agents)' }),
        checkpoint_id: z.string().min(1).optional().meta({ description: 'update from this checkpoint (a fork) instead of the latest' }),
        checkpoint: CheckpointBody.nullish(),
      }),
      bodyExamples: { edit: { summary: 'set one value', value: { values: { text: 'edited' } } } },
      responses: {
        200: { description: 'The checkpoint written', schema: z.object({ checkpoint: CheckpointRefSchema.nullable() }) },
        ...posted,
        ...langgraphErrors(409),
      },
      handler: async ({ params, body, principal }) => {
        const session = await threadSession(deps, principal.tenant, params.thread_id);
        const checkpointId = body.checkpoint_id ?? body.checkpoint?.checkpoint_id;
        if (body.checkpoint_id && body.checkpoint?.checkpoint_id && body.checkpoint_id !== body.checkpoint.checkpoint_id) {
          throw badRequest('checkpoint_id and checkpoint.checkpoint_id name different checkpoints.');
        }
        const checkpointNs = body.checkpoint?.checkpoint_ns;
        const update = { values: body.values ?? {}, ...(body.as_node ? { asNode: body.as_node } : {}), ...(checkpointId ? { checkpointId } : {}), ...(checkpointNs ? { checkpointNs } : {}) };
        return { status: 200, body: await updateThreadState(deps, principal.tenant, session, update) };
      },
    }),
    defineLangGraphRoute({
      method: 'GET',
      path: '/threads/:thread_id/history',
      operationId: 'getThreadHistory',
      summary: "The thread's past states, newest first",
      params: ThreadParams,
      query: z.object({
        limit: z.string().regex(/^\d{1,4}$/).optional().transform((v) => (v === undefined ? 10 : Number(v))).pipe(z.number().int().min(1).max(1000)).meta({ type: 'integer', minimum: 1, maximum: 1000, default: 10 }),
        before: z.string().min(1).optional().meta({ description: 'only states older than this checkpoint id' }),
      }),
      responses: { 200: { description: 'States, newest first', schema: z.array(ThreadStateSchema) }, ...one },
      handler: async ({ params, query, principal }) => {
        const session = await threadSession(deps, principal.tenant, params.thread_id);
        return { status: 200, body: await readThreadHistory(deps, principal.tenant, session, query) };
      },
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/threads/:thread_id/history',
      operationId: 'searchThreadHistory',
      summary: "The thread's past states, newest first, filtered",
      readOnly: true,
      params: ThreadParams,
      body: z.strictObject({
        limit: z.number().int().min(1).max(1000).default(10),
        before: BeforeBody,
        metadata: JsonObjectSchema.optional().meta({ description: "only states whose checkpoint metadata holds these keys with these values" }),
        checkpoint: CheckpointBody.optional(),
        select: SelectBody,
      }),
      bodyExamples: { last: { summary: 'the ten newest states', value: { limit: 10 } } },
      responses: { 200: { description: 'States, newest first', schema: z.array(ThreadStateSchema.partial()) }, ...posted },
      handler: async ({ params, body, principal }) => {
        const session = await threadSession(deps, principal.tenant, params.thread_id);
        const states = await readThreadHistory(deps, principal.tenant, session, {
          limit: body.limit,
          ...(body.before ? { before: body.before } : {}),
          ...(body.checkpoint?.checkpoint_id ? { checkpointId: body.checkpoint.checkpoint_id } : {}),
          ...(body.checkpoint?.checkpoint_ns ? { checkpointNs: body.checkpoint.checkpoint_ns } : {}),
          ...(body.metadata ? { metadata: body.metadata } : {}),
        });
        return { status: 200, body: states.map((state) => selected(state, body.select)) };
      },
    }),
  ];
}
