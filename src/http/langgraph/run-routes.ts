import type { Context } from 'koa';
import { z } from 'zod';
import { AppError } from '../../domain/errors.js';
import { EVENT_ID_PATTERN } from '../../domain/event-ids.js';
import { roleAtLeast, type Principal } from '../../domain/types.js';
import { cancelRuns, cancelThreadRun, createRun, deleteEndedRun, describeRun, listThreadRuns, threadRun } from '../../langgraph-server/runs.js';
import { LANGGRAPH_RUN_STATUSES, STREAM_MODES, THREAD_STREAM_MODES, type RunCreate } from '../../langgraph-server/types.js';
import type { AppDeps } from '../deps.js';
import type { AnyRoute, Example } from '../route.js';
import { IdParam, JsonObjectSchema } from '../schemas.js';
import { intQuery } from '../validate.js';
import { defineLangGraphRoute, langgraphErrors } from './define.js';
import { withHeaderConfigurable } from './header-configurable.js';
import { joinRun, joinStream, joinThreadStream, streamRun, waitForRun } from './run-flows.js';
import { LangGraphRunSchema, RunCreateBody } from './schemas.js';
import { FROM_START } from './sse.js';

/**
 * Runs of the LangGraph Server API: create, wait, stream (on a thread, or stateless), list,
 * get, join, join the stream (Last-Event-ID), cancel (or roll back), delete. Each is an agentplane run of the
 * assistant's agent on the thread's session, seen in /api/runs, the console and the inbox.
 */

const ThreadParams = z.object({ thread_id: IdParam });
const RunParams = z.object({ thread_id: IdParam, run_id: IdParam });
const Flag = z
  .enum(['0', '1', 'true', 'false'])
  .optional()
  .transform((v) => v === '1' || v === 'true');
const CancelQuery = z.object({
  action: z
    .enum(['interrupt', 'rollback'])
    .optional()
    .meta({ description: "default `interrupt`; `rollback` also deletes the run and takes its thread back to its state before the run (see the HTTP contract)" }),
});
const JoinStreamHeaders = z.object({
  'last-event-id': z
    .string()
    .regex(new RegExp(`^(${FROM_START}|${EVENT_ID_PATTERN.source.slice(1, -1)})$`), { error: 'expected an event id such as 1763719200000-0, or -1 for the whole run' })
    .optional()
    .meta({ description: 'resume after this event id; `-1`: the whole run from its `metadata` event; absent: as `-1`' }),
});

const ThreadStreamHeaders = z.object({
  'last-event-id': z
    .string()
    .regex(EVENT_ID_PATTERN, { error: 'expected an event id such as 1763719200000-0' })
    .optional()
    .meta({ description: "resume after this event id: every frame of the thread's runs after it; absent: the run under way from its start, then later runs" }),
});

/** A query value SDK 2.0 sends as JSON (it encodes an array parameter as one JSON string): the array; else the value. */
function jsonArrayOf(value: unknown): unknown {
  if (typeof value !== 'string' || !value.startsWith('[')) return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

const ValuesSchema = JsonObjectSchema.meta({
  description: "the thread's values once the run stopped; with `__interrupt__` when it paused at an interrupt, `{__error__: {error, message}}` when it failed",
});
const STREAM_DESCRIPTION =
  'Server-sent events: `metadata` `{run_id, attempt}` first, then one event per chunk (event = the stream mode, `mode|namespace` for a ' +
  'subgraph; id = the event id for Last-Event-ID), `error` `{error, message}` when the run fails; the response ends once the run ends ' +
  'or pauses at an interrupt. `: keep-alive` comment lines meanwhile (no blank line after them).';

const THREAD_STREAM_DESCRIPTION =
  "Server-sent events of the thread's runs one after the other, each framed as its own stream (`metadata` `{run_id, attempt}`, its chunks, " +
  '`error` when it fails) and ended by `metadata` `{run_id, status: "run_done"}`: the run under way from its start, then every run started on ' +
  'the thread after it; the response stays open until the client leaves. `: keep-alive` comment lines meanwhile (no blank line after them).';

const EXAMPLES: Record<string, Example<z.infer<typeof RunCreateBody>>> = {
  echo: { summary: 'echo on this thread (created when it does not exist)', value: { assistant_id: 'echo', input: { text: 'hello' }, if_not_exists: 'create' } },
  resume: { summary: 'resume the interrupt the thread waits on', value: { assistant_id: 'human-review', command: { resume: { approved: true } } } },
};
const STATELESS_EXAMPLES: Record<string, Example<z.infer<typeof RunCreateBody>>> = {
  echo: { summary: 'echo on a thread of its own, removed afterwards', value: { assistant_id: 'echo', input: { text: 'hello' } } },
};

/**
 * A join with `cancel_on_disconnect` cancels the run when its client leaves: as POST …/cancel,
 * it needs the `user` role where roles are enforced (a viewer may join, not cancel).
 */
function mayCancel(deps: AppDeps, principal: Principal): void {
  const { SERVICE_RBAC, SERVICE_AUTH } = deps.config;
  if (SERVICE_RBAC && SERVICE_AUTH !== 'none' && !roleAtLeast(principal.role, 'user')) {
    throw new AppError('forbidden', 'cancel_on_disconnect cancels the run when the client leaves, which needs the user role (a viewer may join without it).');
  }
}

/** The LangGraph runs routes. */
export function langgraphRunRoutes(deps: AppDeps): AnyRoute[] {
  const starts = langgraphErrors(400, 401, 403, 404, 409, 413, 415, 429, 503);
  const reads = langgraphErrors(400, 401, 403, 404, 429);
  const withHeaders = (body: RunCreate, ctx: Context) => withHeaderConfigurable(body, ctx.req.headers, deps.config.SERVICE_API_KEY_HEADER);
  return [
    defineLangGraphRoute({
      method: 'POST',
      path: '/threads/:thread_id/runs',
      operationId: 'createThreadRun',
      summary: 'Create a run on a thread (LangGraph)',
      params: ThreadParams,
      body: RunCreateBody,
      bodyExamples: EXAMPLES,
      responses: { 200: { description: 'The run, pending', schema: LangGraphRunSchema, headers: { 'Content-Location': 'the run' } }, ...starts },
      handler: async ({ params, body, principal, ctx }) => {
        const run = await createRun(deps, principal, withHeaders(body, ctx), params.thread_id);
        return { status: 200, body: run, headers: { 'Content-Location': `/threads/${run.thread_id}/runs/${run.run_id}` } };
      },
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/threads/:thread_id/runs/wait',
      operationId: 'waitThreadRun',
      summary: "Create a run on a thread and answer the thread's values once it stops (LangGraph)",
      params: ThreadParams,
      body: RunCreateBody,
      bodyExamples: EXAMPLES,
      responses: { 200: { description: 'The values (kept alive with newlines while the run goes on)', schema: ValuesSchema, headers: { 'Content-Location': 'the run' } }, ...starts },
      handler: async ({ params, body, principal, ctx }) => waitForRun(deps, principal, ctx, withHeaders(body, ctx), params.thread_id),
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/threads/:thread_id/runs/stream',
      operationId: 'streamThreadRun',
      summary: 'Create a run on a thread and stream it (LangGraph)',
      params: ThreadParams,
      body: RunCreateBody,
      bodyExamples: EXAMPLES,
      responses: {
        200: {
          description: STREAM_DESCRIPTION,
          contentType: 'text/event-stream',
          headers: { 'Content-Location': 'the run', Location: 'where to resume the stream (GET, with Last-Event-ID)' },
        },
        ...starts,
      },
      handler: async ({ params, body, principal, ctx }) => streamRun(deps, principal, ctx, withHeaders(body, ctx), params.thread_id),
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/runs',
      operationId: 'createStatelessRun',
      summary: 'Run on a new thread, in the background (LangGraph, stateless)',
      body: RunCreateBody,
      bodyExamples: STATELESS_EXAMPLES,
      responses: { 200: { description: 'The run, pending', schema: LangGraphRunSchema, headers: { 'Content-Location': 'the run' } }, ...starts },
      handler: async ({ body, principal, ctx }) => {
        const run = await createRun(deps, principal, withHeaders(body, ctx));
        const kept = body.on_completion === 'keep';
        return { status: 200, body: run, headers: { 'Content-Location': kept ? `/threads/${run.thread_id}/runs/${run.run_id}` : `/runs/${run.run_id}` } };
      },
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/runs/wait',
      operationId: 'waitStatelessRun',
      summary: 'Run on a new thread and answer its values once the run stops (LangGraph, stateless)',
      body: RunCreateBody,
      bodyExamples: STATELESS_EXAMPLES,
      responses: { 200: { description: 'The values (kept alive with newlines while the run goes on)', schema: ValuesSchema, headers: { 'Content-Location': 'the run' } }, ...starts },
      handler: async ({ body, principal, ctx }) => waitForRun(deps, principal, ctx, withHeaders(body, ctx)),
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/runs/stream',
      operationId: 'streamStatelessRun',
      summary: 'Run on a new thread and stream it (LangGraph, stateless)',
      body: RunCreateBody,
      bodyExamples: STATELESS_EXAMPLES,
      responses: { 200: { description: STREAM_DESCRIPTION, contentType: 'text/event-stream', headers: { 'Content-Location': 'the run' } }, ...starts },
      handler: async ({ body, principal, ctx }) => streamRun(deps, principal, ctx, withHeaders(body, ctx)),
    }),
    defineLangGraphRoute({
      method: 'GET',
      path: '/threads/:thread_id/runs',
      operationId: 'listThreadRuns',
      summary: "A thread's runs, newest first (LangGraph)",
      params: ThreadParams,
      query: z.object({
        limit: intQuery(1, 100, 10).meta({ description: 'page size (1–100; a thread keeps its newest 100 runs)' }),
        offset: intQuery(0, 100, 0).meta({ description: 'runs to skip' }),
        status: z.enum(LANGGRAPH_RUN_STATUSES).optional().meta({ description: 'only the runs with this LangGraph status' }),
      }),
      responses: { 200: { description: 'A page of runs', schema: z.array(LangGraphRunSchema) }, ...reads },
      handler: async ({ params, query, principal }) => ({ status: 200, body: await listThreadRuns(deps, principal.tenant, params.thread_id, query) }),
    }),
    defineLangGraphRoute({
      method: 'GET',
      path: '/threads/:thread_id/runs/:run_id',
      operationId: 'getThreadRun',
      summary: 'One run of a thread (LangGraph)',
      params: RunParams,
      responses: { 200: { description: 'The run', schema: LangGraphRunSchema }, ...reads },
      handler: async ({ params, principal }) => ({
        status: 200,
        body: await describeRun(deps, principal.tenant, await threadRun(deps, principal.tenant, params.thread_id, params.run_id)),
      }),
    }),
    defineLangGraphRoute({
      method: 'DELETE',
      path: '/threads/:thread_id/runs/:run_id',
      operationId: 'deleteThreadRun',
      summary: "Delete a run that ended, with the thread's checkpoints it wrote (LangGraph)",
      params: RunParams,
      responses: { 204: { description: 'Deleted' }, ...langgraphErrors(400, 401, 403, 404, 409, 429) },
      handler: async ({ params, principal }) => {
        await deleteEndedRun(deps, principal, params.thread_id, params.run_id);
        return { status: 204, body: null };
      },
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/threads/:thread_id/runs/:run_id/cancel',
      operationId: 'cancelThreadRun',
      summary: 'Cancel (or roll back) a run of a thread (LangGraph); one that ended already is left as it is',
      params: RunParams,
      query: CancelQuery.extend({
        wait: Flag.meta({ description: 'answer 204 once the run ended (else 202 at once)' }),
        reason: z.string().max(200).optional().meta({ description: 'accepted and ignored' }),
      }),
      responses: { 202: { description: 'Cancelled (or already ended)' }, 204: { description: 'Cancelled and ended (`wait`)' }, ...reads },
      handler: async ({ params, query, principal }) => {
        await cancelThreadRun(deps, principal, params.thread_id, params.run_id, query.action);
        // The run's status is final once cancelRun answers: there is nothing more to wait for.
        return query.wait ? { status: 204, body: null } : { status: 202, body: '' };
      },
    }),
    defineLangGraphRoute({
      method: 'GET',
      path: '/threads/:thread_id/runs/:run_id/join',
      operationId: 'joinThreadRun',
      summary: "Wait for a run to stop and answer the thread's values (LangGraph)",
      params: RunParams,
      query: z.object({ cancel_on_disconnect: Flag.meta({ description: 'cancel the run if the client leaves before it stops' }) }),
      responses: { 200: { description: 'The values (kept alive with newlines while the run goes on)', schema: ValuesSchema }, ...langgraphErrors(400, 401, 403, 404, 410, 429, 503) },
      handler: async ({ params, query, principal, ctx }) => {
        if (query.cancel_on_disconnect) mayCancel(deps, principal);
        return joinRun(deps, principal, ctx, params.thread_id, params.run_id, query.cancel_on_disconnect);
      },
    }),
    defineLangGraphRoute({
      method: 'GET',
      path: '/threads/:thread_id/runs/:run_id/stream',
      operationId: 'joinThreadRunStream',
      summary: "Stream a run from where the client left it (Last-Event-ID) until it stops (LangGraph)",
      params: RunParams,
      headers: JoinStreamHeaders,
      query: z.object({
        cancel_on_disconnect: Flag.meta({ description: 'cancel the run if the client leaves before it stops' }),
        stream_mode: z
          .preprocess(jsonArrayOf, z.union([z.enum(STREAM_MODES), z.array(z.enum(STREAM_MODES))]))
          .optional()
          .meta({ description: "a native agent's frames (`values`, `custom`); a graph's run streams the modes it was created with; an array also as one JSON string (SDK 2.0)" }),
      }),
      responses: { 200: { description: STREAM_DESCRIPTION, contentType: 'text/event-stream' }, ...langgraphErrors(400, 401, 403, 404, 429, 503) },
      handler: async ({ params, query, headers, principal, ctx }) => {
        if (query.cancel_on_disconnect) mayCancel(deps, principal);
        return joinStream(deps, principal, ctx, {
          threadId: params.thread_id,
          runId: params.run_id,
          ...(headers['last-event-id'] ? { afterId: headers['last-event-id'] } : {}),
          modes: query.stream_mode === undefined ? ['values'] : [query.stream_mode].flat(),
          cancelOnLeave: query.cancel_on_disconnect,
        });
      },
    }),
    defineLangGraphRoute({
      method: 'GET',
      path: '/threads/:thread_id/stream',
      operationId: 'joinThreadStream',
      summary: "Stream a thread's runs: the one under way, then each started after it, until the client leaves (LangGraph)",
      params: ThreadParams,
      headers: ThreadStreamHeaders,
      query: z.object({
        stream_mode: z
          .preprocess(jsonArrayOf, z.union([z.enum(THREAD_STREAM_MODES), z.array(z.enum(THREAD_STREAM_MODES))]))
          .optional()
          .meta({
            description:
              "`run_modes` (default): the runs' frames and their `run_done`; `lifecycle`: only each run's `metadata` at its start and end; `state_update`: accepted, none are sent",
          }),
      }),
      responses: { 200: { description: THREAD_STREAM_DESCRIPTION, contentType: 'text/event-stream' }, ...langgraphErrors(400, 401, 403, 404, 429, 503) },
      handler: async ({ params, query, headers, principal, ctx }) =>
        joinThreadStream(deps, principal, ctx, {
          threadId: params.thread_id,
          ...(headers['last-event-id'] ? { afterId: headers['last-event-id'] } : {}),
          modes: query.stream_mode === undefined ? ['run_modes'] : [query.stream_mode].flat(),
        }),
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/runs/cancel',
      operationId: 'cancelRuns',
      summary: 'Cancel runs by id, or every pending or running run (LangGraph)',
      query: CancelQuery,
      body: z
        .strictObject({
          thread_id: IdParam.optional().meta({ description: 'the thread of `run_ids` (or of the runs `status` names)' }),
          run_ids: z.array(IdParam).min(1).max(500).optional(),
          status: z.enum(['pending', 'running', 'all']).optional().meta({ description: 'cancel the runs in this status (at most 500), instead of `run_ids`' }),
        })
        .refine((body) => (body.run_ids === undefined) !== (body.status === undefined), { path: ['run_ids'], error: 'give either run_ids or status' }),
      bodyExamples: { pending: { summary: 'every pending run of the tenant', value: { status: 'pending' } } },
      responses: { 204: { description: 'Cancelled (runs that ended already are left as they are)' }, ...langgraphErrors(400, 401, 403, 404, 413, 415, 429) },
      handler: async ({ body, query, principal }) => {
        await cancelRuns(deps, principal, body, query.action);
        return { status: 204, body: null };
      },
    }),
  ];
}
