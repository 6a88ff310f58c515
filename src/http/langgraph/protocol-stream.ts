import type { Context } from 'koa';
import { ACTIVE_RUN_STATUSES, type Principal } from '../../domain/types.js';
import { matchesFilter, ProtocolTranslator, type ProtocolEvent, type ProtocolFilter } from '../../langgraph-server/protocol-events.js';
import type { AppDeps } from '../deps.js';
import { followThread } from './thread-follow.js';

/**
 * A thread's event stream of LangGraph's streaming protocol (`POST /threads/{id}/stream/events`):
 * the events of the thread's current run from its first one, then every event of its runs as
 * they come (thread-follow.ts), translated (protocol-events.ts) and filtered by the request's
 * channels and namespaces, until the client leaves. This connection keeps only its translator.
 */

function frame(event: ProtocolEvent): Buffer {
  return Buffer.from(`id: ${event.event_id}\nevent: ${event.method}\ndata: ${JSON.stringify(event)}\n\n`);
}

/**
 * Opens the protocol event stream of a thread for `principal`: 404 when the tenant has no such
 * thread, 429 over the caller's stream cap, 503 when live delivery cannot be established.
 */
export async function streamThreadEvents(deps: AppDeps, principal: Principal, ctx: Context, threadId: string, filter: ProtocolFilter): Promise<'handled'> {
  const translator = new ProtocolTranslator();
  return followThread(deps, principal, ctx, threadId, {
    name: 'protocol event stream',
    // A thread with no run has nothing to send until one starts: the headers go out now.
    keepAliveFirst: true,
    // The current run: the oldest still active (one may wait behind it), else the newest.
    current: (runs) => runs.filter((run) => ACTIVE_RUN_STATUSES.includes(run.status)).at(-1) ?? runs[0],
    deliver: (stored, stream) => {
      for (const event of translator.translate(stored)) if (matchesFilter(event, filter)) stream.write(frame(event));
    },
  });
}
