import { isDeepStrictEqual } from 'node:util';
import { AppError, badRequest, conflict, notFound } from '../domain/errors.js';
import type { JsonObject, Principal, Schedule } from '../domain/types.js';
import { isGraphAgent, type Agent } from '../runtime/agent.js';
import { firesAt } from '../runtime/schedule-control.js';
import { assistantIdOf, resolveAssistant, withAssistant, type Assistant } from './assistants.js';
import type { LangGraphDeps } from './deps.js';
import { definedOf, multitaskOf, type MultitaskStrategy, type NodeList, type RunConfig } from './types.js';

/**
 * The crons of the LangGraph Server API (what `@langchain/langgraph-sdk`'s `client.crons`
 * asks) over agentplane schedules: a cron is a schedule, its id the schedule's, its thread the
 * session every fire reuses. Changes go through the schedule control.
 */

type CronDeps = Pick<LangGraphDeps, 'store' | 'agents' | 'assistants' | 'schedules'>;

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

/** A cron as LangGraph's server answers it. */
export interface Cron {
  cron_id: string;
  assistant_id: string;
  thread_id: string | null;
  on_run_completed: 'delete' | 'keep' | null;
  end_time: string | null;
  schedule: string;
  timezone: string;
  created_at: string;
  updated_at: string;
  payload: JsonObject;
  user_id: null;
  next_run_date: string | null;
  metadata: JsonObject;
  enabled: boolean;
}

/** The run options a cron keeps for its fires, and what a creation and an update share. */
export interface CronRunOptions {
  input?: unknown;
  config?: RunConfig | undefined;
  context?: unknown;
  interrupt_before?: NodeList | undefined;
  interrupt_after?: NodeList | undefined;
  metadata?: Record<string, unknown> | undefined;
  webhook?: string | undefined;
  on_run_completed?: 'delete' | 'keep' | undefined;
  enabled?: boolean | undefined;
}

/** `POST /runs/crons` and `POST /threads/{id}/runs/crons`. */
export interface CronCreate extends CronRunOptions {
  assistant_id: string;
  schedule: string;
  timezone?: string | undefined;
  end_time?: string | undefined;
  multitask_strategy?: MultitaskStrategy | undefined;
}

/** `PATCH /runs/crons/{id}`: what is given replaces what the cron has; `metadata` is merged (null removes a key). */
export interface CronUpdate extends CronRunOptions {
  schedule?: string | undefined;
  timezone?: string | undefined;
  end_time?: string | null | undefined;
}

/** A schedule as LangGraph's Cron. */
export function cronOf(schedule: Schedule): Cron {
  const { assistant_id: assistantId, ...graph } = schedule.graph ?? {};
  return {
    cron_id: schedule.id,
    assistant_id: typeof assistantId === 'string' ? assistantId : assistantIdOf(schedule.agent_id),
    thread_id: schedule.new_session ? null : (schedule.session_id ?? null),
    // A stateless cron stored before `delete` existed kept its threads.
    on_run_completed: schedule.new_session ? (schedule.on_run_completed ?? 'keep') : null,
    end_time: schedule.end_time ?? null,
    schedule: schedule.cron_expr,
    timezone: schedule.timezone,
    created_at: schedule.created_at,
    updated_at: schedule.updated_at ?? schedule.created_at,
    payload: { ...(schedule.graph ? graph : { input: schedule.input }), ...(schedule.webhook ? { webhook: schedule.webhook } : {}) },
    user_id: null,
    next_run_date: firesAt(schedule, Date.parse(schedule.next_run)) ? schedule.next_run : null,
    metadata: schedule.metadata ?? {},
    enabled: schedule.enabled !== false,
  };
}

/** What a schedule keeps of a cron's run options: a graph's `graph` options, or a native agent's `input`. */
export type CronRun = Pick<Schedule, 'input' | 'graph'>;

/**
 * The run options of a cron for `agent`, `current` ones (an update) replaced by those `body`
 * gives. A graph agent's are its engine's options (with the strategy, as a run creation keeps
 * it; each fire adds the cron's metadata); a native agent takes an input object and none of a
 * graph's options. Throws `bad_request` for what agentplane does not support.
 */
export function cronRunOf(agent: Agent, body: CronCreate | CronUpdate, current?: Schedule, assistant?: Assistant): CronRun {
  if (isGraphAgent(agent)) {
    const strategy = 'multitask_strategy' in body ? body.multitask_strategy : undefined;
    // A stored assistant's config and context go under the cron's as it is created (its runs keep them, and its id).
    const { config, context } = assistant ? withAssistant(assistant, body.config, body.context) : body;
    const given = definedOf({
      input: body.input,
      config: config && definedOf({ configurable: config.configurable, tags: config.tags, recursion_limit: config.recursion_limit, metadata: config.metadata }),
      context,
      assistant_id: assistant?.assistant_id,
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

/** What a cron keeps beside its run options, as the schedule's fields (only those given). */
function scheduleFieldsOf<E extends string | null>(body: CronRunOptions & { timezone?: string | undefined; end_time?: E | undefined }) {
  return {
    ...(body.timezone === undefined ? {} : { timezone: body.timezone }),
    ...(body.end_time === undefined ? {} : { end_time: body.end_time }),
    ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
    ...(body.metadata === undefined ? {} : { metadata: body.metadata }),
    ...(body.webhook === undefined ? {} : { webhook: body.webhook }),
    ...(body.on_run_completed === undefined ? {} : { on_run_completed: body.on_run_completed }),
  };
}

/** A cron's thread exists and is not another assistant's (a thread no run has bound yet takes any). */
async function checkThread(deps: CronDeps, tenant: string, threadId: string, agentId: string): Promise<void> {
  const session = await deps.store.sessions.getSession(tenant, threadId);
  if (!session) throw notFound(`Thread "${threadId}"`);
  if (session.agent_id !== '' && session.agent_id !== agentId) {
    throw conflict(`Thread "${threadId}" belongs to assistant "${session.agent_id}"; a cron of "${agentId}" needs another thread.`);
  }
}

/** Creates a cron: stateless (a new thread each fire), or bound to `threadId`. */
export async function createCron(deps: CronDeps, principal: Principal, body: CronCreate, threadId?: string): Promise<Cron> {
  const { agent, assistant, stored } = await resolveAssistant(deps, principal.tenant, body.assistant_id);
  if (threadId !== undefined) await checkThread(deps, principal.tenant, threadId, agent.id);
  const schedule = await deps.schedules.create(principal.tenant, {
    agent_id: agent.id,
    cron_expr: body.schedule,
    new_session: threadId === undefined,
    multitask: multitaskOf(body.multitask_strategy),
    ...cronRunOf(agent, body, undefined, stored ? assistant : undefined),
    ...(threadId === undefined ? {} : { session_id: threadId }),
    ...scheduleFieldsOf(body),
    // LangGraph's default for a stateless cron: each tick's thread goes once its run stops.
    ...(threadId === undefined ? { on_run_completed: body.on_run_completed ?? 'delete' } : {}),
  });
  return cronOf(schedule);
}

/** Changes a cron; `not_found` for none, `unknown_agent` when its agent is gone. */
export async function updateCron(deps: CronDeps, tenant: string, cronId: string, body: CronUpdate): Promise<Cron> {
  const current = await deps.store.schedules.getSchedule(tenant, cronId);
  if (!current) throw notFound('The cron');
  const agent = deps.agents.get(current.agent_id);
  if (!agent) throw new AppError('unknown_agent', `The cron's agent "${current.agent_id}" is no longer registered; delete the cron.`);
  // A stored assistant's config and context go under what the update gives, as at the creation.
  const assistantId = current.graph?.assistant_id;
  const assistant = typeof assistantId === 'string' ? (await deps.assistants.get(tenant, assistantId))?.assistant : undefined;
  const updated = await deps.schedules.update(tenant, cronId, {
    ...cronRunOf(agent, body, current, assistant),
    ...(body.schedule === undefined ? {} : { cron_expr: body.schedule }),
    ...scheduleFieldsOf(body),
  });
  return cronOf(updated);
}

/** Deletes a cron and its trigger. */
export async function deleteCron(deps: CronDeps, tenant: string, cronId: string): Promise<void> {
  await deps.schedules.remove(tenant, cronId);
}

export interface CronFilters {
  assistant_id?: string | undefined;
  thread_id?: string | undefined;
  enabled?: boolean | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** Schedules read per page when a search reads the tenant's schedules. */
const READ_PAGE = 500;

/** Every schedule of the tenant (a search filters and sorts them all). */
async function schedulesOf(deps: CronDeps, tenant: string): Promise<Schedule[]> {
  const all: Schedule[] = [];
  for (let offset = 0; ; offset += READ_PAGE) {
    const page = await deps.store.schedules.listSchedules(tenant, { limit: READ_PAGE, offset });
    all.push(...page);
    if (page.length < READ_PAGE) return all;
  }
}

const matches = (filters: CronFilters) => (cron: Cron) =>
  (filters.assistant_id === undefined || cron.assistant_id === assistantIdOf(filters.assistant_id) || cron.assistant_id === filters.assistant_id.toLowerCase()) &&
  (filters.thread_id === undefined || cron.thread_id === filters.thread_id) &&
  (filters.enabled === undefined || cron.enabled === filters.enabled) &&
  Object.entries(filters.metadata ?? {}).every(([key, value]) => isDeepStrictEqual(cron.metadata[key], value));

/** The tenant's crons matching every filter given. */
export async function matchingCrons(deps: CronDeps, tenant: string, filters: CronFilters): Promise<Cron[]> {
  return (await schedulesOf(deps, tenant)).map(cronOf).filter(matches(filters));
}

export interface CronSort {
  sort_by: 'cron_id' | 'assistant_id' | 'thread_id' | 'created_at' | 'updated_at' | 'next_run_date';
  sort_order: 'asc' | 'desc';
}

/** The tenant's crons matching `filters`, sorted (ties by cron id). */
export async function searchCrons(deps: CronDeps, tenant: string, filters: CronFilters & CronSort): Promise<Cron[]> {
  const { sort_by: by, sort_order: order } = filters;
  const sign = order === 'asc' ? 1 : -1;
  const key = (cron: Cron) => cron[by] ?? '';
  return (await matchingCrons(deps, tenant, filters)).sort((a, b) => sign * key(a).localeCompare(key(b)) || a.cron_id.localeCompare(b.cron_id));
}
