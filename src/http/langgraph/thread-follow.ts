import type { Context } from 'koa';
import { compareEventIds } from '../../domain/event-ids.js';
import type { Principal, Run, StoredEvent } from '../../domain/types.js';
import { threadSession } from '../../langgraph-server/thread-state.js';
import type { AppDeps } from '../deps.js';
import type { SseStream } from '../sse.js';

/**
 * Following a thread's runs, one after the other, on one event stream: the events of the
 * thread's current run from its first one (or those after a Last-Event-ID), then every event
 * of its runs as they come, until the client leaves. What both thread streams share (the
 * streaming protocol's `POST /threads/{id}/stream/events`, LangGraph's `GET /threads/{id}/stream`);
 * each frames the events its own way. The thread's events come from the event bus (the
 * tenant's retained log, then its live events), so any replica serves any thread; a connection
 * keeps only where it is in the log.
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

export interface ThreadFollow {
  /** The current run among the thread's runs (newest first): shown from its first event, with every later run; none: only runs to come. */
  current(runs: readonly Run[]): Run | undefined;
  /**
   * With a Last-Event-ID: every event of the thread's runs after it is shown. The replay may
   * start earlier (at the current run's start), so `deliver` also sees events up to it: the
   * framing keeps track of them and writes only those after it.
   */
  afterId?: string;
  /** Each event of a shown run, once, in bus order. */
  deliver(stored: StoredEvent, stream: SseStream): void;
  /** What the log calls this stream when reading the retained events fails. */
  name: string;
  /**
   * Opens with a keep-alive line, so the response's headers go out at once, before any frame
   * (a client that waits for them before it reads sees the stream open on a quiet thread).
   */
  keepAliveFirst?: boolean;
}

/** One connection's delivery: each thread event once, in bus order, from the first run it shows on. */
class ThreadEvents {
  private lastId: string | undefined;
  private stream: SseStream | undefined;
  /** Live events that came while the retained log was read. */
  private held: StoredEvent[] | undefined = [];

  constructor(
    private readonly threadId: string,
    private readonly follow: ThreadFollow,
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
    this.follow.deliver(stored, stream);
  }
}

/**
 * Opens an event stream of a thread's runs for `principal`: 404 when the tenant has no such
 * thread, 429 over the caller's stream cap, 503 when live delivery cannot be established.
 */
export async function followThread(deps: AppDeps, principal: Principal, ctx: Context, threadId: string, follow: ThreadFollow): Promise<'handled'> {
  const { tenant } = principal;
  await threadSession(deps, tenant, threadId);
  const release = deps.streams.admit(principal, ctx.ip);
  // Subscribed before the log is read: what is published meanwhile is held, nothing is missed.
  const connection = new ThreadEvents(threadId, follow);
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
  const current = follow.current(runs);
  const stream = deps.streams.start(ctx, { retryLine: false });
  stream.onClose(done);
  if (follow.keepAliveFirst) stream.write(stream.keepAlive);
  const startOf = (run: Run) => `${Math.max(0, Date.parse(run.created_at) - CLOCK_SKEW_MS)}-0`;
  let fromId = current ? startOf(current) : `${Date.now()}-0`;
  if (follow.afterId === undefined) {
    connection.older = new Set(runs.slice(current ? runs.indexOf(current) + 1 : 0).map((run) => run.id));
  } else {
    // From the start of the run under way at that event (the newest created before it), so the
    // framing knows what the client had seen of it; and of the current run, when older still.
    const afterMs = Number(follow.afterId.split('-')[0]);
    const covering = runs.find((run) => Date.parse(run.created_at) <= afterMs);
    fromId = [follow.afterId, ...[current, covering].filter((run) => run !== undefined).map(startOf)].reduce((a, b) => (compareEventIds(a, b) <= 0 ? a : b));
  }
  connection.replay(deps, tenant, stream, fromId).catch((error: unknown) => {
    deps.logger.warn({ err: error, thread_id: threadId }, `${follow.name} ended: reading the retained events failed; the client reconnects`);
    stream.end();
  });
  return 'handled';
}
