import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { AppError, conflict, notFound } from '../../domain/errors.js';
import { ACTIVE_RUN_STATUSES, MAX_QUEUED_BEHIND, type JsonObject, type Session } from '../../domain/types.js';
import type { AppDeps } from '../deps.js';
import { graphAgentOf, threadSession } from '../langgraph-thread-state.js';
import { countThreads, searchThreads, THREAD_SCAN_LIMIT, THREAD_STATUSES, ThreadFacts, threadMetadata } from '../langgraph-threads.js';
import type { AnyRoute } from '../route.js';
import { IdParam, JsonObjectSchema, Timestamp } from '../schemas.js';
import { defineLangGraphRoute, langgraphErrors } from './langgraph-route.js';

type ThreadDeps = Pick<AppDeps, 'store' | 'graphs' | 'agents' | 'config' | 'runs' | 'logger'>;

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

/** Deleting a thread cancels its active runs and tries again this many times when a run became active meanwhile. */
const DELETE_ATTEMPTS = 3;

/** A `graph_id` in a thread's metadata names a registered agent (the graph its state and runs use). */
function checkGraphId(deps: Pick<AppDeps, 'agents'>, metadata: JsonObject | undefined): void {
  const graphId = metadata?.graph_id;
  if (graphId === undefined || graphId === null) return;
  if (typeof graphId !== 'string' || !deps.agents.get(graphId)) {
    throw new AppError('unknown_agent', `metadata.graph_id: Agent ${JSON.stringify(graphId)} is not registered.`);
  }
}

const threadOf = (deps: ThreadDeps, tenant: string, session: Session) => new ThreadFacts(deps, tenant, session).thread();

/** POST /threads (create), search, count; GET, PATCH, DELETE a thread; copy one. */
export function langgraphThreadRoutes(deps: ThreadDeps): AnyRoute[] {
  const { store } = deps;
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
        supersteps: z.array(z.unknown()).max(0, { error: 'not supported: create the thread, then update its state' }).optional(),
      }),
      bodyExamples: { empty: { summary: 'a new thread', value: { metadata: { user: 'ana' }, if_exists: 'raise' } } },
      responses: { 200: { description: 'The thread', schema: ThreadSchema }, ...langgraphErrors(400, 401, 403, 409, 413, 415, 429) },
      handler: async ({ body, principal }) => {
        checkGraphId(deps, body.metadata);
        const sessionId = body.thread_id ?? randomUUID();
        let session: Session;
        try {
          session = await store.sessions.createSession(principal.tenant, { session_id: sessionId, metadata: body.metadata ?? {} });
        } catch (error) {
          const existing = error instanceof AppError && error.code === 'conflict' ? await store.sessions.getSession(principal.tenant, sessionId) : null;
          if (!existing) throw error;
          if (body.if_exists === 'raise') throw conflict(`Thread "${sessionId}" already exists.`);
          session = existing;
        }
        return { status: 200, body: await threadOf(deps, principal.tenant, session) };
      },
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/threads/search',
      operationId: 'searchThreads',
      summary: `Search threads: the tenant's newest ${THREAD_SCAN_LIMIT} sessions, or those of ids`,
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
          description: `A page of threads. Without ids, only the tenant's ${THREAD_SCAN_LIMIT} newest sessions are searched.`,
          schema: z.array(ThreadSchema.partial()),
          headers: { 'X-Pagination-Next': 'offset of the next page, when there is one' },
        },
        ...langgraphErrors(400, 401, 403, 413, 415, 429),
      },
      handler: async ({ body, principal }) => {
        const { threads, more } = await searchThreads(deps, principal.tenant, body);
        const { select } = body;
        return {
          status: 200,
          body: select ? threads.map((thread) => Object.fromEntries(Object.entries(thread).filter(([field]) => (select as readonly string[]).includes(field)))) : threads,
          headers: more ? { 'X-Pagination-Next': String(body.offset + threads.length) } : ({} as Record<string, string>),
        };
      },
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/threads/count',
      operationId: 'countThreads',
      summary: `Count threads matching the filters (among the tenant's newest ${THREAD_SCAN_LIMIT} sessions)`,
      readOnly: true,
      body: z.strictObject(Filters),
      bodyExamples: { all: { summary: 'every thread', value: {} } },
      responses: { 200: { description: `How many match, at most ${THREAD_SCAN_LIMIT}`, schema: z.number().int() }, ...langgraphErrors(400, 401, 403, 413, 415, 429) },
      handler: async ({ body, principal }) => ({ status: 200, body: await countThreads(deps, principal.tenant, body) }),
    }),
    defineLangGraphRoute({
      method: 'GET',
      path: '/threads/:thread_id',
      operationId: 'getThread',
      summary: 'One thread',
      params: ThreadParams,
      responses: { 200: { description: 'The thread', schema: ThreadSchema }, ...one },
      handler: async ({ params, principal }) => ({ status: 200, body: await threadOf(deps, principal.tenant, await threadSession(deps, principal.tenant, params.thread_id)) }),
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
      handler: async ({ params, body, principal }) => {
        checkGraphId(deps, body.metadata);
        const session = body.metadata
          ? await store.sessions.updateSessionMetadata(principal.tenant, params.thread_id, body.metadata).catch((error: unknown) => {
              throw error instanceof AppError && error.code === 'not_found' ? notFound(`Thread "${params.thread_id}"`) : error;
            })
          : await threadSession(deps, principal.tenant, params.thread_id);
        return { status: 200, body: await threadOf(deps, principal.tenant, session) };
      },
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
      handler: async ({ params, principal }) => {
        const copy = await copyThread(deps, principal.tenant, await threadSession(deps, principal.tenant, params.thread_id));
        return { status: 200, body: await threadOf(deps, principal.tenant, copy) };
      },
    }),
  ];
}

/** Deletes the session, cancelling its active runs first when it has any (as LangGraph's server deletes a busy thread). */
async function deleteThread(deps: ThreadDeps, tenant: string, threadId: string, by: string): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await deps.store.sessions.deleteSession(tenant, threadId);
      return;
    } catch (error) {
      if (error instanceof AppError && error.code === 'not_found') throw notFound(`Thread "${threadId}"`);
      if (!(error instanceof AppError && error.code === 'conflict') || attempt === DELETE_ATTEMPTS) throw error;
    }
    for (const status of ACTIVE_RUN_STATUSES) {
      const runs = await deps.store.runs.findRuns(tenant, { session_id: threadId, status, limit: MAX_QUEUED_BEHIND + 1, offset: 0 });
      for (const run of runs) {
        await deps.runs.cancelRun(tenant, run.id, by).catch((error: unknown) => {
          // Ended meanwhile: nothing left to cancel.
          if (!(error instanceof AppError && (error.code === 'conflict' || error.code === 'not_found'))) throw error;
        });
      }
    }
  }
}

/**
 * A new session with the thread's metadata (its graph_id naming the graph) and its state: a
 * graph's LangGraph checkpoints are copied (history, tasks and interrupts included), a native
 * session's latest checkpoint. Runs, approvals and traces stay with the source.
 */
async function copyThread(deps: ThreadDeps, tenant: string, source: Session): Promise<Session> {
  const copy = await deps.store.sessions.createSession(tenant, { session_id: randomUUID(), metadata: threadMetadata(source) });
  try {
    const graphId = graphAgentOf(deps, source);
    if (graphId) {
      await deps.graphs!.copyThread(tenant, source.id, copy.id, graphId);
    } else {
      const latest = await deps.store.sessions.getCheckpoint(tenant, source.id);
      if (latest) await deps.store.sessions.appendCheckpoint(tenant, copy.id, { patch: latest.state, node_id: latest.node_id });
    }
  } catch (error) {
    // A copy that failed half-way is not left behind.
    await deps.store.sessions.deleteSession(tenant, copy.id).catch((cleanup: unknown) => deps.logger.warn({ err: cleanup, thread_id: copy.id }, 'a failed thread copy was not removed'));
    throw error;
  }
  return (await deps.store.sessions.getSession(tenant, copy.id)) ?? copy;
}
