import { z } from 'zod';
import { notFound } from '../../domain/errors.js';
import type { AppDeps } from '../deps.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { errorResponses, IdParam, JsonObjectSchema, RunTicketSchema, Timestamp } from '../schemas.js';
import { pageQuery } from '../validate.js';

export const RunSchema = z
  .object({
    id: z.string(),
    session_id: z.string(),
    agent_id: z.string(),
    status: z.enum(['queued', 'running', 'interrupted', 'completed', 'failed']),
    created_at: Timestamp,
    updated_at: Timestamp,
    error: z.string().optional(),
    approval_id: z.string().optional().meta({ description: 'the latest approval request that paused this run' }),
  })
  .meta({ id: 'Run' });


const AgentSchema = z
  .object({ id: z.string(), description: z.string(), nodes: z.array(z.string()), entry: z.string() })
  .meta({ id: 'Agent' });

/** Agents, starting runs and reading runs (extensions of CONTRACT.md). */
export function runRoutes(deps: AppDeps): AnyRoute[] {
  const { store, runs, agents } = deps;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/agents',
      operationId: 'listAgents',
      summary: 'Registered agents',
      tag: 'runs',
      responses: {
        200: { description: 'The agents', schema: z.object({ agents: z.array(AgentSchema) }) },
        ...errorResponses(401, 403, 429),
      },
      handler: async () => ({
        status: 200,
        body: {
          agents: agents.list().map((a) => ({ id: a.id, description: a.description, nodes: Object.keys(a.nodes), entry: a.entry })),
        },
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/runs',
      operationId: 'startRun',
      summary: 'Start a run of an agent, on a new or an existing session',
      tag: 'runs',
      body: z.strictObject({
        agent_id: z.string().min(1),
        input: JsonObjectSchema.optional(),
        session_id: IdParam.optional().meta({ description: 'run on this session (created when absent)' }),
      }),
      responses: {
        202: { description: 'The run is queued', schema: RunTicketSchema, headers: { Location: 'URL of the run' } },
        ...errorResponses(400, 401, 403, 409, 413, 415, 429),
      },
      handler: async ({ body, principal }) => {
        const ticket = await runs.startRun(principal.tenant, body);
        return { status: 202, body: ticket, headers: { Location: `/api/runs/${ticket.run_id}` } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/runs',
      operationId: 'listRuns',
      summary: 'Runs of a session, newest first, a page at a time',
      tag: 'runs',
      query: z.object({ session_id: IdParam, ...pageQuery(50, 500) }),
      responses: {
        200: { description: 'The runs', schema: z.object({ runs: z.array(RunSchema) }) },
        ...errorResponses(400, 401, 403, 404, 429),
      },
      handler: async ({ query, principal }) => {
        if (!(await store.sessions.getSession(principal.tenant, query.session_id))) throw notFound('The session');
        return { status: 200, body: { runs: await store.runs.listRuns(principal.tenant, query.session_id, query) } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/runs/:id',
      operationId: 'getRun',
      summary: 'One run',
      tag: 'runs',
      params: z.object({ id: IdParam }),
      responses: { 200: { description: 'The run', schema: RunSchema }, ...errorResponses(400, 401, 403, 404, 429) },
      handler: async ({ params, principal }) => {
        const run = await store.runs.getRun(principal.tenant, params.id);
        if (!run) throw notFound('The run');
        return { status: 200, body: run };
      },
    }),
  ];
}
