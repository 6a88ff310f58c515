import { z } from 'zod';
import { AppError, notFound } from '../../domain/errors.js';
import type { AppDeps } from '../deps.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { CheckpointSchema, errorResponses, IdParam, JsonObjectSchema, RunTicketSchema, SessionSchema } from '../schemas.js';
import { pageQuery } from '../validate.js';
import { isGraphAgent } from '../../runtime/agent.js';

const PageQuery = pageQuery(50, 500);

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
      query: z.object({
        agent_id: z.string().optional().meta({ description: 'filter to one agent' }),
        session_id: IdParam.optional().meta({ description: 'find this session: a list of it alone, or empty (an exact id, not a prefix)' }),
        ...PageQuery,
      }),
      responses: {
        200: { description: 'A page of sessions', schema: z.object({ sessions: z.array(SessionSchema) }) },
        ...errorResponses(400, 401, 403, 429),
      },
      handler: async ({ query, principal }) => {
        const { session_id: sessionId, ...options } = query;
        if (sessionId === undefined) return { status: 200, body: { sessions: await store.sessions.listSessions(principal.tenant, options) } };
        // The other filters and the page still apply, so a search reads as a list of at most one.
        const found = await store.sessions.getSession(principal.tenant, sessionId);
        const matches = found && (options.agent_id === undefined || found.agent_id === options.agent_id) ? [found] : [];
        return { status: 200, body: { sessions: matches.slice(options.offset, options.offset + options.limit) } };
      },
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
      bodyExamples: {
        edit: { summary: 'overwrite one key, keep the others', value: { state: { text: 'edited', editor: 'ana' } } },
      },
      responses: {
        200: { description: 'The new checkpoint with the merged state', schema: CheckpointSchema },
        ...errorResponses(400, 401, 403, 404, 409, 412, 413, 415, 429),
      },
      handler: async ({ query, body, principal, ctx }) => {
        // A graph session's state is the graph's: the edit goes through the graph (its reducers apply).
        if (deps.graphs) {
          const session = await store.sessions.getSession(principal.tenant, query.session_id);
          if (session && isGraphAgent(deps.agents.get(session.agent_id))) {
            const checkpoint = await deps.graphs.updateState(principal.tenant, query.session_id, body.state, { ifSeq: parseIfMatch(ctx.get('If-Match')) });
            return { status: 200, body: checkpoint, headers: { ETag: `"${checkpoint.seq_num}"` } };
          }
        }
        const written = await store.sessions.appendCheckpoint(principal.tenant, query.session_id, {
          patch: body.state,
          ifSeq: parseIfMatch(ctx.get('If-Match')),
          rejectWhileRunning: true,
          withState: true,
        });
        // The write is O(patch); the answer carries the merged state of exactly that checkpoint:
        // from the write when the state is small, else read back by its seq_num (in chunks).
        const checkpoint = (written.state ? { ...written, state: written.state } : undefined) ??
          (await store.sessions.getCheckpoint(principal.tenant, query.session_id, written.seq_num)) ?? {
          ...written,
          state: (await store.sessions.getCheckpoint(principal.tenant, query.session_id))?.state ?? {},
        };
        return { status: 200, body: checkpoint, headers: { ETag: `"${checkpoint.seq_num}"` } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/sessions/history',
      operationId: 'listSessionHistory',
      summary: 'The retained checkpoints of a session, newest first, a page at a time',
      tag: 'sessions',
      query: SessionQuery.extend(PageQuery),
      responses: {
        200: {
          description:
            'A page of checkpoints: at most `limit`, and no more than SERVICE_MAX_PAGE_BYTES of JSON (one checkpoint always fits). ' +
            '`next_offset` is present when older checkpoints remain: pass it as `offset` for the next page.',
          schema: z.object({
            checkpoints: z.array(CheckpointSchema),
            next_offset: z.number().int().optional().meta({ description: 'offset of the next page, when there is one' }),
          }),
        },
        ...errorResponses(400, 401, 403, 404, 429),
      },
      handler: async ({ query, principal }) => {
        if (!(await store.sessions.getSession(principal.tenant, query.session_id))) throw notFound('The session');
        const page = await store.sessions.listCheckpoints(principal.tenant, query.session_id, {
          ...query,
          maxBytes: deps.config.SERVICE_MAX_PAGE_BYTES,
        });
        const next = page.more ? { next_offset: query.offset + page.checkpoints.length } : {};
        return { status: 200, body: { checkpoints: page.checkpoints, ...next } };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/sessions',
      operationId: 'deleteSession',
      summary: 'Delete a session with its state, history, traces, runs and approvals',
      tag: 'sessions',
      query: SessionQuery,
      responses: {
        200: { description: 'Deleted', schema: z.object({ session_id: z.string(), status: z.literal('deleted') }) },
        ...errorResponses(400, 401, 403, 404, 409, 429),
      },
      handler: async ({ query, principal }) => {
        await store.sessions.deleteSession(principal.tenant, query.session_id);
        return { status: 200, body: { session_id: query.session_id, status: 'deleted' } };
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
