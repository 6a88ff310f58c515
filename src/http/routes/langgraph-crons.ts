import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { AppError, conflict, notFound } from '../../domain/errors.js';
import type { Principal, Schedule } from '../../domain/types.js';
import type { Store } from '../../ports/store.js';
import type { AppDeps } from '../deps.js';
import { CRON_FIELDS, CronCreateBody, cronOf, cronRunOf, CronSchema, CronUpdateBody, multitaskOf, type Cron, type CronCreate } from '../langgraph-cron.js';
import type { AnyRoute } from '../route.js';
import { IdParam, JsonObjectSchema } from '../schemas.js';
import { assistantIdOf, resolveAssistant } from './langgraph-assistants.js';
import { defineLangGraphRoute, langgraphErrors, searchAnswer } from './langgraph-route.js';

type CronDeps = Pick<AppDeps, 'store' | 'agents' | 'schedules'>;

const CronParams = z.object({ cron_id: IdParam.meta({ description: 'the cron id (a schedule id)' }) });
const ThreadParams = z.object({ thread_id: IdParam.meta({ description: 'thread id (the session id)' }) });

const Filters = {
  assistant_id: z.string().optional().meta({ description: 'only the crons of this assistant (its id, or the graph id)' }),
  thread_id: z.string().optional().meta({ description: 'only the crons bound to this thread' }),
  enabled: z.boolean().optional(),
  metadata: JsonObjectSchema.optional().meta({ description: 'metadata holding each of these keys with this value' }),
};
type CronFilters = { assistant_id?: string; thread_id?: string; enabled?: boolean; metadata?: Record<string, unknown> };

const SORT_FIELDS = ['cron_id', 'assistant_id', 'thread_id', 'created_at', 'updated_at', 'next_run_date'] as const;

/** Schedules read per page when a search reads the tenant's schedules. */
const READ_PAGE = 500;

/** Every schedule of the tenant (a search filters and sorts them all). */
async function schedulesOf(store: Pick<Store, 'schedules'>, tenant: string): Promise<Schedule[]> {
  const all: Schedule[] = [];
  for (let offset = 0; ; offset += READ_PAGE) {
    const page = await store.schedules.listSchedules(tenant, { limit: READ_PAGE, offset });
    all.push(...page);
    if (page.length < READ_PAGE) return all;
  }
}

const matches = (filters: CronFilters) => (cron: Cron) =>
  (filters.assistant_id === undefined || cron.assistant_id === assistantIdOf(filters.assistant_id) || cron.assistant_id === filters.assistant_id.toLowerCase()) &&
  (filters.thread_id === undefined || cron.thread_id === filters.thread_id) &&
  (filters.enabled === undefined || cron.enabled === filters.enabled) &&
  Object.entries(filters.metadata ?? {}).every(([key, value]) => isDeepStrictEqual(cron.metadata[key], value));

async function matching(store: Pick<Store, 'schedules'>, tenant: string, filters: CronFilters): Promise<Cron[]> {
  return (await schedulesOf(store, tenant)).map(cronOf).filter(matches(filters));
}

/** A cron's thread exists and is not another assistant's (a thread no run has bound yet takes any). */
async function checkThread(deps: CronDeps, tenant: string, threadId: string, agentId: string): Promise<void> {
  const session = await deps.store.sessions.getSession(tenant, threadId);
  if (!session) throw notFound(`Thread "${threadId}"`);
  if (session.agent_id !== '' && session.agent_id !== agentId) {
    throw conflict(`Thread "${threadId}" belongs to assistant "${session.agent_id}"; a cron of "${agentId}" needs another thread.`);
  }
}

/** POST /runs/crons[/search|/count], POST /threads/{id}/runs/crons, PATCH and DELETE /runs/crons/{id}: crons are schedules. */
export function langgraphCronRoutes(deps: CronDeps): AnyRoute[] {
  const { store, agents, schedules } = deps;
  const written = langgraphErrors(400, 'invalid_cron', 'unknown_agent', 401, 403, 404, 413, 415, 429, 503);

  async function create(principal: Principal, body: CronCreate, threadId?: string): Promise<Cron> {
    const agent = resolveAssistant(agents, body.assistant_id);
    if (threadId !== undefined) await checkThread(deps, principal.tenant, threadId, agent.id);
    const schedule = await schedules.create(principal.tenant, {
      agent_id: agent.id,
      cron_expr: body.schedule,
      new_session: threadId === undefined,
      multitask: multitaskOf(body.multitask_strategy),
      ...cronRunOf(agent, body),
      ...(threadId === undefined ? {} : { session_id: threadId }),
      ...(body.timezone === undefined ? {} : { timezone: body.timezone }),
      ...(body.end_time === undefined ? {} : { end_time: body.end_time }),
      ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
      ...(body.metadata === undefined ? {} : { metadata: body.metadata }),
      ...(body.webhook === undefined ? {} : { webhook: body.webhook }),
    });
    return cronOf(schedule);
  }

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
      handler: async ({ body, principal }) => ({ status: 200, body: await create(principal, body) }),
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/threads/:thread_id/runs/crons',
      operationId: 'createThreadCron',
      summary: 'Create a cron bound to a thread: each tick runs the assistant on it',
      params: ThreadParams,
      ...creation,
      handler: async ({ body, params, principal }) => ({ status: 200, body: await create(principal, body, params.thread_id) }),
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
      handler: async ({ body, principal }) => {
        const { sort_by: by, sort_order: order } = body;
        const sign = order === 'asc' ? 1 : -1;
        const key = (cron: Cron) => cron[by] ?? '';
        return searchAnswer((await matching(store, principal.tenant, body)).sort((a, b) => sign * key(a).localeCompare(key(b)) || a.cron_id.localeCompare(b.cron_id)), body);
      },
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
      handler: async ({ body, principal }) => ({ status: 200, body: (await matching(store, principal.tenant, body)).length }),
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
      handler: async ({ body, params, principal }) => {
        const current = await store.schedules.getSchedule(principal.tenant, params.cron_id);
        if (!current) throw notFound('The cron');
        const agent = agents.get(current.agent_id);
        if (!agent) throw new AppError('unknown_agent', `The cron's agent "${current.agent_id}" is no longer registered; delete the cron.`);
        const updated = await schedules.update(principal.tenant, params.cron_id, {
          ...cronRunOf(agent, body, current),
          ...(body.schedule === undefined ? {} : { cron_expr: body.schedule }),
          ...(body.timezone === undefined ? {} : { timezone: body.timezone }),
          ...(body.end_time === undefined ? {} : { end_time: body.end_time }),
          ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
          ...(body.metadata === undefined ? {} : { metadata: body.metadata }),
          ...(body.webhook === undefined ? {} : { webhook: body.webhook }),
        });
        return { status: 200, body: cronOf(updated) };
      },
    }),
    defineLangGraphRoute({
      method: 'DELETE',
      path: '/runs/crons/:cron_id',
      operationId: 'deleteCron',
      summary: 'Delete a cron and its trigger; no further fires',
      params: CronParams,
      responses: { 204: { description: 'Deleted' }, ...langgraphErrors(400, 401, 403, 404, 429) },
      handler: async ({ params, principal }) => {
        await schedules.remove(principal.tenant, params.cron_id);
        return { status: 204, body: undefined };
      },
    }),
  ];
}
