import { z } from 'zod';
import { notFound } from '../../domain/errors.js';
import type { AppDeps } from '../deps.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { errorResponses, IdParam, SpanSchema } from '../schemas.js';
import { pageQuery } from '../validate.js';

/** Trace spans of a session: one root per run, one child per node execution. */
export function traceRoutes(deps: AppDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/traces',
      operationId: 'listTraces',
      summary: 'Trace spans of a session, a page at a time, each page ordered by start',
      tag: 'traces',
      query: z.object({ session_id: IdParam, ...pageQuery(500, 1000) }),
      responses: {
        200: {
          description:
            'A page of spans ordered by start. Pages follow the order spans were written (a span is written when it ends, so a run’s root span comes after its nodes).',
          schema: z.object({ traces: z.array(SpanSchema) }),
        },
        ...errorResponses(400, 401, 403, 404, 429),
      },
      handler: async ({ query, principal }) => {
        if (!(await deps.store.sessions.getSession(principal.tenant, query.session_id))) throw notFound('The session');
        return { status: 200, body: { traces: await deps.store.sessions.listSpans(principal.tenant, query.session_id, query) } };
      },
    }),
  ];
}
