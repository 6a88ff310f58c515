import { z } from 'zod';
import { notFound } from '../../domain/errors.js';
import type { AppDeps } from '../deps.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { errorResponses, IdParam, JsonObjectSchema, Timestamp } from '../schemas.js';
import { intQuery } from '../validate.js';

const ScheduleSchema = z
  .object({
    id: z.string(),
    agent_id: z.string(),
    cron_expr: z.string().meta({ description: 'standard 5-field cron expression', example: '*/5 * * * *' }),
    input: JsonObjectSchema,
    new_session: z.boolean().meta({ description: 'true: a fresh session per fire; false: one session reused by every fire' }),
    timezone: z.string().meta({ description: 'IANA time zone the expression is read in', example: 'UTC' }),
    next_run: Timestamp.meta({ description: 'next fire time, recomputed after each fire' }),
    created_at: Timestamp,
    session_id: z.string().optional().meta({ description: 'the session every fire reuses (new_session false)' }),
    end_time: Timestamp.optional().meta({ description: 'no tick after it fires (a LangGraph cron’s end_time)' }),
    enabled: z.boolean().optional().meta({ description: 'false: its ticks start nothing (a LangGraph cron disabled); absent means true' }),
    graph: JsonObjectSchema.optional().meta({ description: 'a graph agent’s run options for each fire, in place of input (a LangGraph cron’s payload)' }),
    multitask: z.enum(['reject', 'enqueue', 'interrupt']).optional().meta({ description: 'when a tick finds the reused session’s run active; absent means reject (skipped)' }),
    metadata: JsonObjectSchema.optional().meta({ description: 'a LangGraph cron’s metadata' }),
    webhook: z.string().optional().meta({ description: 'each fire’s run is POSTed there when it ends (a LangGraph cron’s webhook)' }),
    updated_at: Timestamp.optional().meta({ description: 'its last change (PATCH /runs/crons/{id})' }),
    on_run_completed: z
      .enum(['delete', 'keep'])
      .optional()
      .meta({ description: 'a stateless LangGraph cron’s new sessions: deleted once their run stops, or kept (those of its last 100 fires)' }),
  })
  .meta({ id: 'Schedule' });

const HistoryRecordSchema = z
  .object({
    schedule_id: z.string(),
    session_id: z.string().meta({ description: 'session used for the fire' }),
    fired_at: Timestamp.meta({ description: 'when the fire ran; later than due_at when it fired late' }),
    due_at: Timestamp.meta({ description: 'the tick the fire belongs to' }),
    status: z.enum(['running', 'completed', 'failed', 'interrupted', 'cancelled', 'skipped']),
    run_id: z.string().optional(),
    error: z.string().optional(),
  })
  .meta({ id: 'ScheduleHistoryRecord' });

const IdParams = z.object({ id: IdParam });

/** Cron schedules that start agent runs (the README's *Schedules*); tenant-scoped. */
export function scheduleRoutes(deps: AppDeps): AnyRoute[] {
  const { store, schedules: control } = deps;
  const existing = async (tenant: string, id: string) => {
    const schedule = await store.schedules.getSchedule(tenant, id);
    if (!schedule) throw notFound('The schedule');
    return schedule;
  };
  return [
    defineRoute({
      method: 'GET',
      path: '/api/schedules',
      operationId: 'listSchedules',
      summary: 'Schedules of the tenant, newest first',
      tag: 'schedules',
      query: z.object({
        limit: intQuery(1, 500, 50).meta({ description: 'page size (1–500)' }),
        offset: intQuery(0, Number.MAX_SAFE_INTEGER, 0).meta({ description: 'page offset' }),
      }),
      responses: {
        200: { description: 'The schedules', schema: z.object({ schedules: z.array(ScheduleSchema) }) },
        ...errorResponses(400, 401, 403, 429),
      },
      handler: async ({ query, principal }) => ({
        status: 200,
        body: { schedules: await store.schedules.listSchedules(principal.tenant, query) },
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/schedules',
      operationId: 'createSchedule',
      summary: 'Create a cron schedule that starts runs of an agent',
      tag: 'schedules',
      body: z.strictObject({
        agent_id: z.string().min(1),
        cron_expr: z.string().meta({ description: 'exactly 5 fields; 400 invalid_cron otherwise' }),
        input: JsonObjectSchema.optional(),
        new_session: z.boolean().optional().meta({ default: true }),
        timezone: z.string().max(64).optional().meta({ default: 'UTC', description: 'IANA time zone' }),
      }),
      bodyExamples: {
        echo: {
          summary: 'echo every 5 minutes, a new session per fire',
          value: { agent_id: 'echo', cron_expr: '*/5 * * * *', input: { text: 'hello' }, new_session: true, timezone: 'UTC' },
        },
        weekdays: {
          summary: 'human-review at 09:00 on weekdays in Berlin, one session reused',
          value: { agent_id: 'human-review', cron_expr: '0 9 * * MON-FRI', input: { topic: 'daily report' }, new_session: false, timezone: 'Europe/Berlin' },
        },
      },
      responses: {
        201: { description: 'Created', schema: ScheduleSchema, headers: { Location: 'URL of the schedule' } },
        ...errorResponses(400, 'invalid_cron', 'unknown_agent', 401, 403, 413, 415, 429, 503),
      },
      handler: async ({ body, principal }) => {
        const schedule = await control.create(principal.tenant, body);
        return { status: 201, body: schedule, headers: { Location: `/api/schedules/${schedule.id}` } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/schedules/:id',
      operationId: 'getSchedule',
      summary: 'One schedule',
      tag: 'schedules',
      params: IdParams,
      responses: { 200: { description: 'The schedule', schema: ScheduleSchema }, ...errorResponses(400, 401, 403, 404, 429) },
      handler: async ({ params, principal }) => ({ status: 200, body: await existing(principal.tenant, params.id) }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/schedules/:id',
      operationId: 'deleteSchedule',
      summary: 'Delete a schedule and its trigger; no further fires',
      tag: 'schedules',
      params: IdParams,
      responses: {
        200: { description: 'Deleted', schema: z.object({ id: z.string(), status: z.literal('deleted') }) },
        ...errorResponses(400, 401, 403, 404, 429),
      },
      handler: async ({ params, principal }) => {
        await control.remove(principal.tenant, params.id);
        return { status: 200, body: { id: params.id, status: 'deleted' } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/schedules/:id/history',
      operationId: 'getScheduleHistory',
      summary: 'Fires of a schedule, newest first (at most 100 kept)',
      tag: 'schedules',
      params: IdParams,
      responses: {
        200: { description: 'The history', schema: z.object({ history: z.array(HistoryRecordSchema) }) },
        ...errorResponses(400, 401, 403, 404, 429),
      },
      handler: async ({ params, principal }) => {
        await existing(principal.tenant, params.id);
        return { status: 200, body: { history: await store.schedules.listScheduleHistory(principal.tenant, params.id) } };
      },
    }),
  ];
}
