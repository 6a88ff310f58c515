import { z } from 'zod';
import { copyThread, createThread, deleteThread, getThread, patchThread, type ThreadDeps } from '../../langgraph-server/thread-actions.js';
import { countThreads, searchThreads, THREAD_SCAN_LIMIT } from '../../langgraph-server/threads.js';
import { THREAD_STATUSES } from '../../langgraph-server/types.js';
import type { AnyRoute } from '../route.js';
import { IdParam, JsonObjectSchema, Timestamp } from '../schemas.js';
import { defineLangGraphRoute, langgraphErrors } from './define.js';

/** The routes of LangGraph threads (src/langgraph-server/threads.ts, thread-actions.ts). */

export const ThreadSchema = z
  .object({
    thread_id: z.string().meta({ description: 'the session id' }),
    created_at: Timestamp,
    updated_at: Timestamp,
    state_updated_at: Timestamp.meta({ description: 'when its latest checkpoint was written (created_at without one)' }),
    metadata: JsonObjectSchema.meta({ description: "the session's metadata, with graph_id and assistant_id of the agent its runs use" }),
    status: z.enum(THREAD_STATUSES).meta({ description: "from the latest run: queued/running → busy, paused at an approval (or a graph stopped before a node) → interrupted, failed → error, else idle" }),
    values: JsonObjectSchema.meta({ description: "the latest checkpoint's state (a graph's values); {} before any" }),
    interrupts: z.record(z.string(), z.array(z.unknown())).meta({ description: 'by task id, the interrupts an interrupted thread waits on' }),
    config: JsonObjectSchema,
    error: z.string().nullable().meta({ description: "the failed run's error when status is error" }),
  })
  .meta({ id: 'Thread' });

const THREAD_FIELDS = ['thread_id', 'created_at', 'updated_at', 'state_updated_at', 'metadata', 'config', 'context', 'status', 'values', 'interrupts'] as const;

const ThreadParams = z.object({ thread_id: IdParam.meta({ description: 'thread id (the session id)' }) });

const Filters = {
  metadata: JsonObjectSchema.optional().meta({ description: 'metadata containing this JSON (as jsonb @>)' }),
  values: JsonObjectSchema.optional().meta({ description: 'values containing this JSON (as jsonb @>)' }),
  status: z.enum(THREAD_STATUSES).optional(),
};

/** POST /threads (create), search, count; GET, PATCH, DELETE a thread; copy one. */
export function langgraphThreadRoutes(deps: ThreadDeps): AnyRoute[] {
  const one = langgraphErrors(400, 401, 403, 404, 429);
  return [
    defineLangGraphRoute({
      method: 'POST',
      path: '/threads',
      operationId: 'createThread',
      summary: 'Create a thread: a session before its first run',
      body: z.strictObject({
        thread_id: IdParam.optional().meta({ description: 'its id; a UUID is made when omitted' }),
        metadata: JsonObjectSchema.optional().meta({ description: 'metadata; a graph_id must name an agent (its state reads and edits use that graph before a run)' }),
        if_exists: z.enum(['raise', 'do_nothing']).default('raise').meta({ description: 'when the thread exists: 409, or answer it unchanged' }),
        supersteps: z
          .array(
            z.strictObject({
              updates: z
                .array(
                  z.strictObject({
                    values: z.unknown().optional(),
                    command: JsonObjectSchema.nullish(),
                    as_node: z.string().min(1).max(256).nullish(),
                  }),
                )
                .min(1)
                .max(100),
            }),
          )
          .max(100)
          .optional()
          .meta({ description: "the new thread's history: each superstep one checkpoint of its updates, as their nodes (LangGraph's bulkUpdateState; needs metadata.graph_id)" }),
      }),
      bodyExamples: { empty: { summary: 'a new thread', value: { metadata: { user: 'ana' }, if_exists: 'raise' } } },
      responses: { 200: { description: 'The thread', schema: ThreadSchema }, ...langgraphErrors(400, 401, 403, 409, 413, 415, 429) },
      handler: async ({ body, principal }) => ({ status: 200, body: await createThread(deps, principal.tenant, body) }),
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/threads/search',
      operationId: 'searchThreads',
      summary: `Search threads: every match of a metadata filter or of busy/interrupted, else among the tenant's newest ${THREAD_SCAN_LIMIT} sessions, or those of ids`,
      readOnly: true,
      body: z.strictObject({
        ...Filters,
        ids: z.array(IdParam).max(THREAD_SCAN_LIMIT).optional().meta({ description: 'only these threads (looked up by id, whatever their age)' }),
        limit: z.number().int().min(1).max(1000).default(10),
        offset: z.number().int().min(0).default(0),
        sort_by: z.enum(['thread_id', 'status', 'created_at', 'updated_at', 'state_updated_at']).default('created_at'),
        sort_order: z.enum(['asc', 'desc']).default('desc'),
        select: z.array(z.enum(THREAD_FIELDS)).min(1).optional().meta({ description: 'only these fields of each thread' }),
      }),
      bodyExamples: { newest: { summary: 'the ten newest threads', value: { limit: 10, offset: 0, sort_by: 'created_at', sort_order: 'desc' } } },
      responses: {
        200: {
          description:
            `A page of threads: at most \`limit\`, and no more than SERVICE_MAX_PAGE_BYTES of JSON (one thread always fits). ` +
            `With a metadata filter holding a string, number, boolean or null value, every thread matching it is found (metadata indexes; sorted otherwise than by created_at desc, its newest ${THREAD_SCAN_LIMIT}); ` +
            `\`busy\` and \`interrupted\` (paused on an approval) threads are found from the active runs; ` +
            `otherwise, without ids, only the tenant's ${THREAD_SCAN_LIMIT} newest sessions are searched.`,
          schema: z.array(ThreadSchema.partial()),
          headers: { 'X-Pagination-Next': 'offset of the next page, when there is one (the page reached its limit or its bytes)' },
        },
        ...langgraphErrors(400, 401, 403, 413, 415, 429),
      },
      handler: async ({ body, principal }) => {
        const { texts, more } = await searchThreads(deps, principal.tenant, body);
        return {
          status: 200,
          // The threads' JSON as the search measured it, not serialized a second time.
          body: `[${texts.join(',')}]`,
          headers: { 'Content-Type': 'application/json; charset=utf-8', ...(more ? { 'X-Pagination-Next': String(body.offset + texts.length) } : {}) },
        };
      },
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/threads/count',
      operationId: 'countThreads',
      summary: `Count threads matching the filters (every match of a metadata filter or of busy/interrupted, else among the tenant's newest ${THREAD_SCAN_LIMIT} sessions)`,
      readOnly: true,
      body: z.strictObject(Filters),
      bodyExamples: { all: { summary: 'every thread', value: {} } },
      responses: { 200: { description: `How many match (at most ${THREAD_SCAN_LIMIT} without a metadata filter holding a scalar value, busy or interrupted)`, schema: z.number().int() }, ...langgraphErrors(400, 401, 403, 413, 415, 429) },
      handler: async ({ body, principal }) => ({ status: 200, body: await countThreads(deps, principal.tenant, body) }),
    }),
    defineLangGraphRoute({
      method: 'GET',
      path: '/threads/:thread_id',
      operationId: 'getThread',
      summary: 'One thread',
      params: ThreadParams,
      responses: { 200: { description: 'The thread', schema: ThreadSchema }, ...one },
      handler: async ({ params, principal }) => ({ status: 200, body: await getThread(deps, principal.tenant, params.thread_id) }),
    }),
    defineLangGraphRoute({
      method: 'PATCH',
      path: '/threads/:thread_id',
      operationId: 'patchThread',
      summary: "Merge metadata into the thread's (a key set to null is removed)",
      params: ThreadParams,
      body: z.strictObject({ metadata: JsonObjectSchema.optional() }),
      bodyExamples: { tag: { summary: 'add a key', value: { metadata: { reviewed: true } } } },
      responses: { 200: { description: 'The thread', schema: ThreadSchema }, ...one, ...langgraphErrors(413, 415) },
      handler: async ({ params, body, principal }) => ({ status: 200, body: await patchThread(deps, principal.tenant, params.thread_id, body.metadata) }),
    }),
    defineLangGraphRoute({
      method: 'DELETE',
      path: '/threads/:thread_id',
      operationId: 'deleteThread',
      summary: 'Delete a thread: its active runs are cancelled, then the session goes with everything of it',
      params: ThreadParams,
      responses: { 204: { description: 'Deleted' }, ...one, ...langgraphErrors(409) },
      handler: async ({ params, principal }) => {
        await deleteThread(deps, principal.tenant, params.thread_id, principal.subject);
        return { status: 204, body: undefined };
      },
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/threads/:thread_id/copy',
      operationId: 'copyThread',
      summary: "Copy a thread: a new thread with its metadata and its state's checkpoints",
      params: ThreadParams,
      responses: { 200: { description: 'The new thread', schema: ThreadSchema }, ...one, ...langgraphErrors(413) },
      handler: async ({ params, principal }) => ({ status: 200, body: await copyThread(deps, principal.tenant, params.thread_id) }),
    }),
  ];
}
