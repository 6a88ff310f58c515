import { z } from 'zod';
import { createCron, CRON_FIELDS, deleteCron, matchingCrons, searchCrons, updateCron } from '../../langgraph-server/crons.js';
import type { LangGraphDeps } from '../../langgraph-server/deps.js';
import type { AnyRoute } from '../route.js';
import { IdParam, JsonObjectSchema } from '../schemas.js';
import { defineLangGraphRoute, langgraphErrors, searchAnswer } from './define.js';
import { CronCreateBody, CronSchema, CronUpdateBody } from './schemas.js';

type CronDeps = Pick<LangGraphDeps, 'store' | 'agents' | 'assistants' | 'schedules'>;

const CronParams = z.object({ cron_id: IdParam.meta({ description: 'the cron id (a schedule id)' }) });
const ThreadParams = z.object({ thread_id: IdParam.meta({ description: 'thread id (the session id)' }) });

const Filters = {
  assistant_id: z.string().optional().meta({ description: 'only the crons of this assistant (its id, or the graph id)' }),
  thread_id: z.string().optional().meta({ description: 'only the crons bound to this thread' }),
  enabled: z.boolean().optional(),
  metadata: JsonObjectSchema.optional().meta({ description: 'metadata holding each of these keys with this value' }),
};

const SORT_FIELDS = ['cron_id', 'assistant_id', 'thread_id', 'created_at', 'updated_at', 'next_run_date'] as const;

/** POST /runs/crons[/search|/count], POST /threads/{id}/runs/crons, PATCH and DELETE /runs/crons/{id}: crons are schedules. */
export function langgraphCronRoutes(deps: CronDeps): AnyRoute[] {
  const written = langgraphErrors(400, 'invalid_cron', 'unknown_agent', 401, 403, 404, 413, 415, 429, 503);

  const creation = {
    body: CronCreateBody,
    bodyExamples: {
      echo: { summary: 'echo every five minutes', value: { assistant_id: 'echo', schedule: '*/5 * * * *', input: { text: 'hello' } } },
      berlin: {
        summary: 'at 09:00 on weekdays in Berlin until the end of 2030, with metadata',
        value: { assistant_id: 'echo', schedule: '0 9 * * 1-5', timezone: 'Europe/Berlin', end_time: '2030-12-31T23:59:59Z', input: { text: 'daily' }, metadata: { team: 'ops' } },
      },
    },
    responses: { 200: { description: 'The cron', schema: CronSchema }, ...written, ...langgraphErrors(409) },
  };

  return [
    defineLangGraphRoute({
      method: 'POST',
      path: '/runs/crons',
      operationId: 'createCron',
      summary: 'Create a stateless cron: each tick runs the assistant on a new thread',
      ...creation,
      handler: async ({ body, principal }) => ({ status: 200, body: await createCron(deps, principal, body) }),
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/threads/:thread_id/runs/crons',
      operationId: 'createThreadCron',
      summary: 'Create a cron bound to a thread: each tick runs the assistant on it',
      params: ThreadParams,
      ...creation,
      handler: async ({ body, params, principal }) => ({ status: 200, body: await createCron(deps, principal, body, params.thread_id) }),
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/runs/crons/search',
      operationId: 'searchCrons',
      summary: 'Search the crons (every schedule of the tenant is one)',
      readOnly: true,
      body: z.strictObject({
        ...Filters,
        limit: z.number().int().min(1).max(1000).default(10).meta({ description: 'page size (1–1000)' }),
        offset: z.number().int().min(0).default(0).meta({ description: 'items to skip' }),
        sort_by: z.enum(SORT_FIELDS).default('created_at'),
        sort_order: z.enum(['asc', 'desc']).default('desc'),
        select: z.array(z.enum(CRON_FIELDS)).min(1).optional().meta({ description: 'only these fields of each cron' }),
      }),
      bodyExamples: { all: { summary: 'the first ten, newest first', value: { limit: 10, offset: 0, sort_by: 'created_at', sort_order: 'desc' } } },
      responses: {
        200: {
          description: 'A page of crons, ties by cron id',
          schema: z.array(CronSchema.partial()),
          headers: { 'X-Pagination-Total': 'crons matching', 'X-Pagination-Next': 'offset of the next page, when there is one' },
        },
        ...langgraphErrors(400, 401, 403, 413, 415, 429),
      },
      handler: async ({ body, principal }) => searchAnswer(await searchCrons(deps, principal.tenant, body), body),
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/runs/crons/count',
      operationId: 'countCrons',
      summary: 'Count the crons matching the filters',
      readOnly: true,
      body: z.strictObject(Filters),
      bodyExamples: { all: { summary: 'every cron', value: {} } },
      responses: { 200: { description: 'How many match', schema: z.number().int() }, ...langgraphErrors(400, 401, 403, 413, 415, 429) },
      handler: async ({ body, principal }) => ({ status: 200, body: (await matchingCrons(deps, principal.tenant, body)).length }),
    }),
    defineLangGraphRoute({
      method: 'PATCH',
      path: '/runs/crons/:cron_id',
      operationId: 'updateCron',
      summary: 'Change a cron: its schedule, time zone, end, run options, metadata (merged) or enabled',
      params: CronParams,
      body: CronUpdateBody,
      bodyExamples: { pause: { summary: 'disable it', value: { enabled: false } } },
      responses: { 200: { description: 'The cron as changed; next_run_date counted from now', schema: CronSchema }, ...written },
      handler: async ({ body, params, principal }) => ({ status: 200, body: await updateCron(deps, principal.tenant, params.cron_id, body) }),
    }),
    defineLangGraphRoute({
      method: 'DELETE',
      path: '/runs/crons/:cron_id',
      operationId: 'deleteCron',
      summary: 'Delete a cron and its trigger; no further fires',
      params: CronParams,
      responses: { 204: { description: 'Deleted' }, ...langgraphErrors(400, 401, 403, 404, 429) },
      handler: async ({ params, principal }) => {
        await deleteCron(deps, principal.tenant, params.cron_id);
        return { status: 204, body: undefined };
      },
    }),
  ];
}
