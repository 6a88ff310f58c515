import { z } from 'zod';
import { badRequest } from '../../domain/errors.js';
import { RUN_EVENT_TYPES, type StoredEvent } from '../../domain/types.js';
import { EVENT_ID_PATTERN } from '../../domain/event-ids.js';
import { EventSeam } from '../../domain/event-seam.js';
import type { EventBus } from '../../ports/event-bus.js';
import type { AppDeps } from '../deps.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { errorResponses, IdParam, Timestamp } from '../schemas.js';
import { SSE_RETRY_MS, type SseStream } from '../sse.js';

const EventId = z
  .string()
  .regex(EVENT_ID_PATTERN, { error: 'expected an event id such as 1763719200000-0' })
  .meta({ description: 'resume after this event id (the Last-Event-ID header wins when both are sent)' });

export const RunEventSchema = z
  .object({
    type: z.enum(RUN_EVENT_TYPES),
    session: z.string(),
    run_id: z.string(),
    agent_id: z.string(),
    ts: Timestamp,
    node: z.string().optional().meta({ description: 'node_start, node_end, interrupted, custom' }),
    status: z.enum(['ok', 'error']).optional().meta({ description: 'node_end' }),
    approval_id: z.string().optional().meta({ description: 'interrupted, approval_decided' }),
    approved: z.boolean().optional().meta({ description: 'approval_decided' }),
    by: z.string().optional().meta({ description: 'approval_decided: the deciding principal, or `timeout`' }),
    error: z.string().optional().meta({ description: 'failed, cancelled (`timeout` when the run\'s deadline passed)' }),
    name: z.string().optional().meta({ description: 'custom: the name a node gave `ctx.emit`' }),
    data: z.unknown().optional().meta({ description: 'custom: the JSON a node gave `ctx.emit` (at most 16 KiB)' }),
  })
  .meta({
    id: 'RunEvent',
    description:
      'The JSON of one frame\'s `data:` line. Each frame is `id: <event id>`, `data: <RunEvent>`, a blank line; ' +
      `the stream starts with \`retry: ${SSE_RETRY_MS}\` and carries \`: keep-alive\` comments.`,
  });

/** How long a new stream waits for this process's event subscription before it ends (the client retries). */
const READY_TIMEOUT_MS = 5_000;
const REPLAY_PAGE = 500;

/** GET /api/events/stream: the run events of the caller's tenant as server-sent events. */
export function eventRoutes(deps: AppDeps): AnyRoute[] {
  const { events, streams, logger } = deps;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/events/stream',
      operationId: 'streamEvents',
      summary: 'Live run events of the tenant (server-sent events), resumable with Last-Event-ID',
      tag: 'events',
      query: z.object({
        session: IdParam.optional().meta({ description: 'only the events of this session' }),
        last_event_id: EventId.optional(),
      }),
      responses: {
        200: {
          description: 'A stream that stays open: every retained event after Last-Event-ID, then live ones',
          contentType: 'text/event-stream',
          schema: RunEventSchema,
          headers: { 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no (proxies must not buffer the stream)' },
        },
        ...errorResponses(400, 401, 403, 429),
      },
      handler: async ({ query, principal, ctx }) => {
        const header = ctx.get('Last-Event-ID').trim();
        if (header !== '' && !EVENT_ID_PATTERN.test(header)) throw badRequest('Last-Event-ID: expected an event id such as 1763719200000-0.');
        const afterId = header || query.last_event_id;
        const release = streams.admit(principal, ctx.ip);
        const stream = streams.start(ctx);
        stream.onClose(release);
        const deliver = (stored: StoredEvent) => {
          if (query.session === undefined || stored.event.session === query.session) stream.send(stored);
        };
        const seam = afterId === undefined ? undefined : new EventSeam(deliver);
        seam?.hold();
        stream.onClose(events.subscribe(principal.tenant, seam ? (e) => seam.push(e) : deliver));
        try {
          await events.ready(READY_TIMEOUT_MS);
        } catch (error) {
          logger.warn({ err: error }, 'event stream ended: no live subscription');
          stream.end();
          return 'handled';
        }
        if (seam && afterId) void replay(events, principal.tenant, seam, afterId, stream, logger);
        return 'handled';
      },
    }),
  ];
}

/** Sends the retained events after `afterId` at the client's pace, then the held live ones. */
async function replay(
  events: EventBus,
  tenant: string,
  seam: EventSeam,
  afterId: string,
  stream: SseStream,
  logger: AppDeps['logger'],
): Promise<void> {
  try {
    await seam.catchUp(
      async (after, count) => {
        await stream.drained();
        if (stream.isClosed) return [];
        return events.readAfter(tenant, after, count);
      },
      afterId,
      REPLAY_PAGE,
      // Event by event at the client's pace: a page of large events (stream chunks of up to
      // 256 KiB) written at once would pass the stream's buffer bound and disconnect it.
      () => stream.drained(),
    );
  } catch (error) {
    logger.warn({ err: error }, 'event stream ended: replay failed; the client resumes with Last-Event-ID');
    stream.end();
  }
}
