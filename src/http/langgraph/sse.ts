import type { Context } from 'koa';
import { compareEventIds } from '../../domain/event-ids.js';
import type { JsonObject, Principal, StoredEvent } from '../../domain/types.js';
import { errorOf, valuesOf, type LangGraphError } from '../../langgraph-server/run-stops.js';
import { pausedAt } from '../../langgraph-server/runs.js';
import type { StreamMode, ThreadStreamMode } from '../../langgraph-server/types.js';
import { STOP_EVENTS, type RunFollower } from '../../runtime/run-follower.js';
import type { AppDeps } from '../deps.js';
import { beginFollowing, waitedRun } from '../run-wait.js';
import type { SseStream } from '../sse.js';

/**
 * A run's events as the server-sent events a LangGraph client reads: first `metadata`
 * (`{run_id, attempt}`), then one frame per `stream` event of the run (event name = its
 * stream mode, `mode|namespace` for a subgraph's; data = the chunk; id = the event id, so a
 * client resumes with Last-Event-ID), `error` (`{error, message}`) when the run fails, and the
 * end of the response once the run ends or pauses. A native agent's run has no chunks: its
 * `custom` events are `custom` frames, and its state at the stop one `values` frame.
 */

/** The id of the `metadata` frame: resuming after it replays the run from its first event. */
const METADATA_EVENT_ID = '0-0';
/** `Last-Event-ID: -1` (what useStream sends to rejoin): the whole run, from its metadata. */
export const FROM_START = '-1';

const REPLAY_PAGE = 500;

function frame(event: string, data: unknown, id?: string): Buffer {
  return Buffer.from(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** One encoded frame per stream event, shared by every LangGraph stream that sends it. */
const frames = new WeakMap<StoredEvent, Buffer>();

function chunkFrame(stored: StoredEvent): Buffer {
  let encoded = frames.get(stored);
  if (!encoded) {
    encoded = frame(stored.event.name ?? 'values', stored.event.data ?? null, stored.id);
    frames.set(stored, encoded);
  }
  return encoded;
}

/** What a LangGraph stream follows. */
export interface StreamTarget {
  run_id: string;
  session_id: string;
  /** A graph agent's run publishes its chunks; a native one's frames are made here. */
  graph: boolean;
  modes: readonly StreamMode[];
  /** Approvals answered to resume the run: their `interrupted` events came before and do not end the stream. */
  answered: ReadonlySet<string>;
}

export interface StreamStart {
  /** Resume after this event id (`-1`: from the start); without it, live events only. */
  afterId?: string;
  /** The run already stopped when the stream was asked for: it ends after the replay. */
  stopped?: boolean;
  /**
   * The approval the run waited on when the stream was asked for. A replayed `interrupted` of
   * another approval is a pause answered since (the console, a resume): the stream goes on.
   */
  pausedAt?: string;
  /** The stream closed before the run stopped (the client left; not at shutdown). */
  onLeft?: () => void;
  /** The run stopped (after its last frame was written). */
  onStopped?: () => void;
}

/**
 * A LangGraph stream of one run: `open` admits the caller and subscribes to the tenant's events
 * before anything changes (before the run starts, or before the run is read), `begin` turns the
 * response into the event stream and follows the run; `abandon` when the request fails first.
 */
export class LangGraphStream {
  private stream: SseStream | undefined;
  private target: StreamTarget | undefined;
  private onStopped: (() => void) | undefined;
  private lastId: string | undefined;
  /** The run stopped (or vanished): nothing more is sent. */
  private ended = false;
  private pausedAt: string | undefined;
  /** Approvals of replayed pauses that were answered when the stream began. */
  private readonly passed = new Set<string>();
  /** The legacy `messages` mode: each streamed message so far, by id, and the ids sent complete. */
  private readonly partial = new Map<string, JsonObject>();
  private readonly completed = new Set<string>();

  private follower: RunFollower | undefined;
  private done: (() => void) | undefined;

  private constructor(
    private readonly deps: AppDeps,
    private readonly tenant: string,
  ) {}

  static async open(deps: AppDeps, principal: Principal, ctx: Context): Promise<LangGraphStream> {
    const opened = new LangGraphStream(deps, principal.tenant);
    const { follower, done } = await beginFollowing(deps, principal, deps.streams.admit(principal, ctx.ip), {
      onEvent: (event) => opened.deliver(event),
      onGone: () => opened.stop({ error: 'GoneError', message: 'The run no longer exists: its thread was removed.' }),
    });
    opened.follower = follower;
    opened.done = done;
    return opened;
  }

  /** Unsubscribes and releases the caller's admission, once. */
  abandon(): void {
    const done = this.done;
    this.done = undefined;
    done?.();
  }

  begin(ctx: Context, target: StreamTarget, start: StreamStart = {}): void {
    this.target = target;
    this.onStopped = start.onStopped;
    this.pausedAt = start.pausedAt;
    const stream = (this.stream = this.deps.streams.start(ctx, { retryLine: false }));
    stream.onClose(() => {
      this.abandon();
      if (!this.ended && !this.deps.lifecycle.draining) start.onLeft?.();
    });
    if (start.afterId === undefined || start.afterId === FROM_START) stream.write(frame('metadata', { run_id: target.run_id, attempt: 1 }, METADATA_EVENT_ID));
    if (start.afterId === undefined) {
      if (start.stopped) return this.stop();
      this.follower!.follow(target.run_id);
      return;
    }
    void this.replay(start.afterId === FROM_START ? METADATA_EVENT_ID : start.afterId, start.stopped === true);
  }

  /** The retained events of the run after `afterId` at the client's pace, then live ones; no event twice. */
  private async replay(afterId: string, stopped: boolean): Promise<void> {
    const { events, logger } = this.deps;
    const stream = this.stream!;
    try {
      let cursor = afterId;
      for (;;) {
        await stream.drained();
        if (stream.isClosed || this.ended) return;
        const page = await events.readAfter(this.tenant, cursor, REPLAY_PAGE);
        for (const event of page) {
          // Event by event at the client's pace: a page of large chunks written at once would
          // pass the stream's buffer bound and disconnect it.
          await stream.drained();
          if (stream.isClosed || this.ended) return;
          this.deliver(event, true);
        }
        if (page.length < REPLAY_PAGE) break;
        cursor = page[page.length - 1]!.id;
      }
    } catch (error) {
      logger.warn({ err: error }, 'LangGraph stream ended: replay failed; the client resumes with Last-Event-ID');
      stream.end();
      return;
    }
    if (stopped || (this.passed.size > 0 && (await this.pausedAgain()))) return this.stop();
    this.lastId ??= afterId;
    this.follower!.follow(this.target!.run_id);
  }

  /**
   * A chunk as the client asked for it. With the legacy `messages` mode (the run then also
   * publishes the model's chunks and the values), a model chunk becomes `messages/metadata` (a
   * message's first) and `messages/partial` (the message so far), and the values' messages not
   * sent yet `messages/complete`; the chunks themselves go out only in the modes asked.
   */
  private writeChunk(stored: StoredEvent, target: StreamTarget): void {
    const stream = this.stream!;
    const name = stored.event.name ?? 'values';
    if (!target.modes.includes('messages')) return void stream.write(chunkFrame(stored));
    const [mode, ...namespace] = name.split('|');
    const suffix = namespace.length > 0 ? `|${namespace.join('|')}` : '';
    if (mode === 'messages') {
      if (target.modes.includes('messages-tuple')) stream.write(chunkFrame(stored));
      const [chunk, metadata] = (stored.event.data ?? []) as [JsonObject | undefined, unknown];
      if (!chunk || typeof chunk.id !== 'string') return;
      const known = this.partial.get(chunk.id);
      if (!known) stream.write(frame(`messages/metadata${suffix}`, { [chunk.id]: { metadata } }, stored.id));
      const merged = known ? mergeChunks(known, chunk) : chunk;
      this.partial.set(chunk.id, merged);
      stream.write(frame(`messages/partial${suffix}`, [merged], stored.id));
      return;
    }
    if (mode === 'values') {
      if (target.modes.includes('values')) stream.write(chunkFrame(stored));
      const messages = (stored.event.data as { messages?: unknown } | null)?.messages;
      if (!Array.isArray(messages)) return;
      const fresh = messages.filter((message: { id?: unknown }) => typeof message?.id === 'string' && !this.completed.has(message.id));
      if (fresh.length === 0) return;
      for (const message of fresh) this.completed.add((message as { id: string }).id);
      stream.write(frame(`messages/complete${suffix}`, fresh, stored.id));
      return;
    }
    stream.write(chunkFrame(stored));
  }

  /** A replayed pause passed over: whether the run paused at it after all (it was not answered when the stream began). */
  private async pausedAgain(): Promise<boolean> {
    const approval = await pausedAt(this.deps, this.tenant, this.target!.run_id);
    return approval !== undefined && this.passed.has(approval);
  }

  private deliver(stored: StoredEvent, replayed = false): void {
    const target = this.target;
    if (this.ended || !target || stored.event.run_id !== target.run_id) return;
    if (this.lastId !== undefined && compareEventIds(stored.id, this.lastId) <= 0) return;
    this.lastId = stored.id;
    const { event } = stored;
    if (event.type === 'stream') this.writeChunk(stored, target);
    else if (event.type === 'custom' && !target.graph && target.modes.includes('custom')) this.stream!.write(frame('custom', event.data ?? null, stored.id));
    if (!STOP_EVENTS.has(event.type)) return;
    if (event.type === 'interrupted') {
      const approvalId = event.approval_id ?? '';
      if (target.answered.has(approvalId)) return;
      if (replayed && approvalId !== this.pausedAt) return void this.passed.add(approvalId);
    }
    if (target.graph) return this.stop(failureOf(event), stored.id);
    this.ended = true;
    void this.stopNative(stored);
  }

  /** A native run's stop: its state as one `values` frame (with `__interrupt__`), or the `error`, then the end. */
  private async stopNative(stop: StoredEvent): Promise<void> {
    let values: JsonObject | undefined;
    try {
      values = await valuesOf(this.deps, this.tenant, await waitedRun(this.deps, this.tenant, this.target!, stop));
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'LangGraph stream: the state of a stopped native run could not be read');
    }
    const failure = values?.__error__ as LangGraphError | undefined;
    this.close(failure, stop.id, failure || !this.target!.modes.includes('values') ? undefined : values);
  }

  private stop(failure?: LangGraphError, id?: string): void {
    if (this.ended) return;
    this.ended = true;
    this.close(failure, id);
  }

  private close(failure?: LangGraphError, id?: string, values?: JsonObject): void {
    const stream = this.stream;
    if (values) stream?.write(frame('values', values));
    if (failure) stream?.write(frame('error', failure, id));
    stream?.end();
    this.onStopped?.();
  }
}

/** The `error` a stop event ends a stream with: a failure, or a cancel at the run's deadline. */
function failureOf(event: StoredEvent['event']): LangGraphError | undefined {
  if (event.type === 'failed') return errorOf({ status: 'failed', error: event.error });
  if (event.type === 'cancelled') return errorOf({ status: 'cancelled', error: event.error });
  return undefined;
}

/**
 * A message chunk added to the message so far (as LangChain's chunk concat does it for what a
 * client shows): text content and tool-call chunks appended, the other fields the latest.
 */
function mergeChunks(known: JsonObject, chunk: JsonObject): JsonObject {
  const merged: JsonObject = { ...known, ...chunk };
  const [a, b] = [known.content, chunk.content];
  if (typeof a === 'string' && typeof b === 'string') merged.content = a + b;
  else if (Array.isArray(a) && Array.isArray(b)) merged.content = [...a, ...b];
  else if (b === '' || b === undefined) merged.content = a ?? '';
  if (Array.isArray(known.tool_call_chunks) && Array.isArray(chunk.tool_call_chunks)) merged.tool_call_chunks = [...known.tool_call_chunks, ...chunk.tool_call_chunks];
  return merged;
}

/**
 * The frames of a thread's runs one after the other (`GET /threads/{id}/stream`): each run as
 * its own stream frames it (`metadata` `{run_id, attempt}` at its first event, its chunks,
 * `error` when it fails), then `metadata` `{run_id, status: "run_done"}` once it stops (a run
 * that goes on after an interrupt starts again with `metadata`). Only the frames after
 * `afterId` (Last-Event-ID) are written; those before only tell which runs were under way.
 * A native agent's run has its `custom` frames, not its values at the stop.
 */
export class ThreadRunFrames {
  /** Runs whose `metadata` is out and that have not stopped since. */
  private readonly open = new Set<string>();
  /** Runs whose `run_done` is out. */
  private readonly stopped = new Set<string>();

  constructor(
    private readonly modes: ReadonlySet<ThreadStreamMode>,
    private readonly isGraph: (agentId: string) => boolean,
    private readonly afterId?: string,
  ) {}

  write(stored: StoredEvent, stream: SseStream): void {
    const { event } = stored;
    const quiet = this.afterId !== undefined && compareEventIds(stored.id, this.afterId) <= 0;
    const out = (bytes: Buffer) => {
      if (!quiet) stream.write(bytes);
    };
    const runs = this.modes.has('run_modes');
    const lifecycle = runs || this.modes.has('lifecycle');
    if (!this.open.has(event.run_id)) {
      // A stop of a run that stopped already (a paused run cancelled when a new run resumes its
      // thread), or an `interrupted` heard late, of a pause answered already, opens nothing.
      if (event.type === 'interrupted' || (STOP_EVENTS.has(event.type) && this.stopped.has(event.run_id))) return;
      this.open.add(event.run_id);
      if (lifecycle) out(frame('metadata', { run_id: event.run_id, attempt: 1 }, stored.id));
    }
    if (runs) {
      if (event.type === 'stream') out(chunkFrame(stored));
      else if (event.type === 'custom' && !this.isGraph(event.agent_id)) out(frame('custom', event.data ?? null, stored.id));
    }
    if (!STOP_EVENTS.has(event.type)) return;
    this.open.delete(event.run_id);
    this.stopped.add(event.run_id);
    const failure = failureOf(event);
    if (runs && failure) out(frame('error', failure, stored.id));
    if (lifecycle) out(frame('metadata', { run_id: event.run_id, status: 'run_done' }, stored.id));
  }
}
