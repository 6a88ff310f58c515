import type { Context } from 'koa';
import { compareEventIds } from '../../domain/event-ids.js';
import { ACTIVE_RUN_STATUSES, type Principal, type Run, type StoredEvent } from '../../domain/types.js';
import { matchesFilter, ProtocolTranslator, type ProtocolEvent, type ProtocolFilter } from '../../langgraph-server/protocol-events.js';
import { threadSession } from '../../langgraph-server/thread-state.js';
import type { AppDeps } from '../deps.js';
import type { SseStream } from '../sse.js';

/**
 * A thread's event stream of LangGraph's streaming protocol (`POST /threads/{id}/stream/events`):
 * the events of the thread's current run from its first one, then every event of its runs as
 * they come, translated (protocol-events.ts) and filtered by the request's channels and
 * namespaces, until the client leaves. The thread's events come from the event bus (the
 * tenant's retained log, then its live events), so any replica serves any thread; this
 * connection keeps only its translator and where it is in the log.
 */

/** How long the event subscription may take before the stream gives up with 503 (the client retries). */
const READY_TIMEOUT_MS = 5_000;
/** The runs of a thread looked at (a thread keeps its newest 100). */
const THREAD_RUNS = 100;
/** Events read from the retained log at a time. */
const REPLAY_PAGE = 500;
/**
 * How far before its run's creation the replay starts reading: the run's `created_at` is the
 * API's clock, the event ids the bus's (Redis's); events of other runs in between are skipped.
 */
const CLOCK_SKEW_MS = 60_000;

function frame(event: ProtocolEvent): Buffer {
  return Buffer.from(`id: ${event.event_id}\nevent: ${event.method}\ndata: ${JSON.stringify(event)}\n\n`);
}

/** One connection's delivery: each thread event once, in bus order, from the first run it shows on. */
class ThreadEventStream {
  private readonly translator = new ProtocolTranslator();
  private lastId: string | undefined;
  private stream: SseStream | undefined;
  /** Live events that came while the retained log was read. */
  private held: StoredEvent[] | undefined = [];

  constructor(
    private readonly threadId: string,
    private readonly filter: ProtocolFilter,
  ) {}

  /** Runs created before the current one: not shown. */
  older: ReadonlySet<string> = new Set();

  hear(event: StoredEvent): void {
    if (event.event.session !== this.threadId) return;
    if (this.held) this.held.push(event);
    else this.deliver(event);
  }

  /** Sends the retained events of the thread after `fromId`, then those heard meanwhile, and goes live. */
  async replay(deps: AppDeps, tenant: string, stream: SseStream, fromId: string): Promise<void> {
    this.stream = stream;
    let cursor = fromId;
    for (;;) {
      await stream.drained();
      if (stream.isClosed) return;
      const page = await deps.events.readAfter(tenant, cursor, REPLAY_PAGE);
      for (const event of page) if (event.event.session === this.threadId) this.deliver(event);
      if (page.length < REPLAY_PAGE) break;
      cursor = page[page.length - 1]!.id;
    }
    const held = this.held ?? [];
    this.held = undefined;
    for (const event of held) this.deliver(event);
  }

  private deliver(stored: StoredEvent): void {
    const stream = this.stream;
    if (!stream || stream.isClosed) return;
    if (this.lastId !== undefined && compareEventIds(stored.id, this.lastId) <= 0) return;
    this.lastId = stored.id;
    if (this.older.has(stored.event.run_id)) return;
    for (const event of this.translator.translate(stored)) if (matchesFilter(event, this.filter)) stream.write(frame(event));
  }
}

/**
 * Opens the protocol event stream of a thread for `principal`: 404 when the tenant has no such
 * thread, 429 over the caller's stream cap, 503 when live delivery cannot be established.
 */
export async function streamThreadEvents(deps: AppDeps, principal: Principal, ctx: Context, threadId: string, filter: ProtocolFilter): Promise<'handled'> {
  const { tenant } = principal;
  await threadSession(deps, tenant, threadId);
  const release = deps.streams.admit(principal, ctx.ip);
  // Subscribed before the log is read: what is published meanwhile is held, nothing is missed.
  const connection = new ThreadEventStream(threadId, filter);
  const unsubscribe = deps.events.subscribe(tenant, (event) => connection.hear(event));
  const done = () => {
    unsubscribe();
    release();
  };
  let runs: Run[];
  try {
    await deps.events.ready(READY_TIMEOUT_MS);
    runs = await deps.store.runs.listRuns(tenant, threadId, { limit: THREAD_RUNS, offset: 0 });
  } catch (error) {
    done();
    throw error;
  }
  // The current run: the oldest still active (one may wait behind it), else the newest.
  const active = runs.filter((run) => ACTIVE_RUN_STATUSES.includes(run.status));
  const current = active.at(-1) ?? runs[0];
  connection.older = new Set(runs.slice(current ? runs.indexOf(current) + 1 : 0).map((run) => run.id));
  const stream = deps.streams.start(ctx, { retryLine: false });
  stream.onClose(done);
  const fromMs = current ? Math.max(0, Date.parse(current.created_at) - CLOCK_SKEW_MS) : Date.now();
  connection.replay(deps, tenant, stream, `${fromMs}-0`).catch((error: unknown) => {
    deps.logger.warn({ err: error, thread_id: threadId }, 'protocol event stream ended: reading the retained events failed; the client reconnects');
    stream.end();
  });
  return 'handled';
}
