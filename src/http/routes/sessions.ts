import { z } from 'zod';
import { AppError, notFound } from '../../domain/errors.js';
import type { AppDeps } from '../deps.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { CheckpointSchema, errorResponses, IdParam, JsonObjectSchema, RunTicketSchema, SessionSchema } from '../schemas.js';
import { intQuery } from '../validate.js';

const PageQuery = {
  limit: intQuery(1, 500, 50).meta({ description: 'page size (1–500)' }),
  offset: intQuery(0, Number.MAX_SAFE_INTEGER, 0).meta({ description: 'page offset' }),
};

const SessionQuery = z.object({ session_id: IdParam.meta({ description: 'session id' }) });

/** `If-Match: <seq_num>` (quoted like an ETag or bare); absent → no precondition. */
function parseIfMatch(header: string): number | undefined {
  if (header === '') return undefined;
  const match = /^(?:W\/)?"?(\d{1,15})"?$/.exec(header.trim());
  if (!match) throw new AppError('bad_request', 'If-Match must name a seq_num, e.g. If-Match: "3".');
  return Number(match[1]);
}

/** Sessions, their latest checkpoint (read and patch), their checkpoint history, and resuming one. */
export function sessionRoutes(deps: AppDeps): AnyRoute[] {
  const { store } = deps;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/sessions',
      operationId: 'listSessions',
      summary: 'List sessions, most recent first',
      tag: 'sessions',
      query: z.object({ agent_id: z.string().optional().meta({ description: 'filter to one agent' }), ...PageQuery }),
      responses: {
        200: { description: 'A page of sessions', schema: z.object({ sessions: z.array(SessionSchema) }) },
        ...errorResponses(400, 401, 403, 429),
      },
      handler: async ({ query, principal }) => ({
        status: 200,
        body: { sessions: await store.sessions.listSessions(principal.tenant, query) },
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/sessions/state',
      operationId: 'getSessionState',
      summary: 'Latest checkpoint of a session',
      tag: 'sessions',
      query: SessionQuery,
      responses: {
        200: { description: 'The latest checkpoint; ETag carries its seq_num', schema: CheckpointSchema, headers: { ETag: 'seq_num of the checkpoint' } },
        ...errorResponses(400, 401, 403, 404, 429),
      },
      handler: async ({ query, principal }) => {
        const checkpoint = await store.sessions.getCheckpoint(principal.tenant, query.session_id);
        if (!checkpoint) throw notFound('A checkpoint of this session');
        return { status: 200, body: checkpoint, headers: { ETag: `"${checkpoint.seq_num}"` } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/sessions/state',
      operationId: 'patchSessionState',
      summary: 'Shallow-merge a state patch into the latest checkpoint (edit, then resume)',
      tag: 'sessions',
      query: SessionQuery,
      body: z.strictObject({ state: JsonObjectSchema }),
      responses: {
        200: { description: 'The new checkpoint with the merged state', schema: CheckpointSchema },
        ...errorResponses(400, 401, 403, 404, 409, 412, 413, 415, 429),
      },
      handler: async ({ query, body, principal, ctx }) => {
        const checkpoint = await store.sessions.appendCheckpoint(principal.tenant, query.session_id, {
          patch: body.state,
          ifSeq: parseIfMatch(ctx.get('If-Match')),
          rejectWhileRunning: true,
        });
        return { status: 200, body: checkpoint, headers: { ETag: `"${checkpoint.seq_num}"` } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/sessions/history',
      operationId: 'listSessionHistory',
      summary: 'Every checkpoint of a session, newest first',
      tag: 'sessions',
      query: SessionQuery.extend(PageQuery),
      responses: {
        200: { description: 'A page of checkpoints', schema: z.object({ checkpoints: z.array(CheckpointSchema) }) },
        ...errorResponses(400, 401, 403, 404, 429),
      },
      handler: async ({ query, principal }) => {
        if (!(await store.sessions.getSession(principal.tenant, query.session_id))) throw notFound('The session');
        return { status: 200, body: { checkpoints: await store.sessions.listCheckpoints(principal.tenant, query.session_id, query) } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/sessions/resume',
      operationId: 'resumeSession',
      summary: 'Continue a failed or edited session from its latest checkpoint',
      tag: 'sessions',
      query: z.object({ session_id: IdParam }),
      responses: {
        202: { description: 'The run is queued', schema: RunTicketSchema, headers: { Location: 'URL of the run' } },
        ...errorResponses(400, 401, 403, 404, 409, 429),
      },
      handler: async ({ query, principal }) => {
        const ticket = await deps.runs.resumeSession(principal.tenant, query.session_id);
        return { status: 202, body: ticket, headers: { Location: `/api/runs/${ticket.run_id}` } };
      },
    }),
  ];
}
