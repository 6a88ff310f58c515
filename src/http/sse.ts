import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import type { Context } from 'koa';
import type { Principal, RunEvent, StoredEvent } from '../domain/types.js';
import { CallerCaps } from './caller-caps.js';

export interface SseHubOptions {
  /** Interval of the `: keep-alive` comment on every open stream (SERVICE_SSE_HEARTBEAT_MS). */
  heartbeatMs: number;
  /**
   * Bytes a stream may hold for a client that does not read; past it the client is
   * disconnected (it resumes with Last-Event-ID once it reads again). @defaultValue 1 MiB
   */
  maxBufferedBytes?: number;
  /** Told the number of open streams whenever it changes (the `agentplane_sse_connections` gauge). */
  onCount?: (open: number) => void;
  /** Streams per caller on this replica (SERVICE_SSE_MAX_PER_PRINCIPAL); 0: no cap. @defaultValue 0 */
  maxPerPrincipal?: number;
  /** The same per tenant (SERVICE_SSE_MAX_PER_TENANT); 0: no cap. @defaultValue 0 */
  maxPerTenant?: number;
  /**
   * Held waits per caller on this replica (SERVICE_WAIT_MAX_PER_PRINCIPAL); 0: no cap. A wait
   * is a request that ends, not a stream: it has a cap of its own. @defaultValue 0
   */
  maxWaitsPerPrincipal?: number;
  /** Told the number of held waits whenever it changes (the `agentplane_waits_held` gauge). */
  onWaitCount?: (held: number) => void;
}

/** Reconnection delay sent to clients in the first line of each stream. */
export const SSE_RETRY_MS = 3000;

const KEEP_ALIVE = Buffer.from(': keep-alive\n\n');
/**
 * The keep-alive of a stream opened without the retry line: the comment line alone. LangGraph's
 * SDK decodes the blank line after a comment into an empty part once it has seen an event id
 * (`{id, event: "", data: null}`); a comment line without it is skipped, as EventSource does.
 */
const BARE_KEEP_ALIVE = Buffer.from(': keep-alive\n');
/** One encoded frame per event, shared by every stream that sends it. */
const frames = new WeakMap<StoredEvent, Buffer>();

function frameOf(stored: StoredEvent): Buffer {
  let frame = frames.get(stored);
  if (!frame) {
    frame = Buffer.from(`id: ${stored.id}\ndata: ${JSON.stringify(stored.event)}\n\n`);
    frames.set(stored, frame);
  }
  return frame;
}

/**
 * The long-held requests of a process: its open server-sent event streams (one shared
 * heartbeat interval, running only while a stream is open) and its held waits, each counted
 * for its gauge and capped per caller, and all of them ended at shutdown.
 */
export class SseHub {
  private readonly open = new Set<SseStream>();
  private readonly held = new Set<() => void>();
  private readonly streamCaps: CallerCaps;
  private readonly waitCaps: CallerCaps;
  private waits = 0;
  private heartbeat: NodeJS.Timeout | undefined;
  private ending = false;
  readonly maxBufferedBytes: number;

  constructor(private readonly options: SseHubOptions) {
    this.maxBufferedBytes = options.maxBufferedBytes ?? 1024 * 1024;
    this.streamCaps = new CallerCaps({
      what: 'open event streams',
      perPrincipal: options.maxPerPrincipal ?? 0,
      perPrincipalVariable: 'SERVICE_SSE_MAX_PER_PRINCIPAL',
      perTenant: options.maxPerTenant ?? 0,
      perTenantVariable: 'SERVICE_SSE_MAX_PER_TENANT',
    });
    this.waitCaps = new CallerCaps({
      what: 'held waits',
      perPrincipal: options.maxWaitsPerPrincipal ?? 0,
      perPrincipalVariable: 'SERVICE_WAIT_MAX_PER_PRINCIPAL',
    });
  }

  /** Number of open streams. */
  get size(): number {
    return this.open.size;
  }

  /** Number of held waits. */
  get waiting(): number {
    return this.waits;
  }

  /** The open streams (tests read their buffered bytes). */
  streams(): SseStream[] {
    return [...this.open];
  }

  /**
   * Turns the response of `ctx` into an event stream: status 200, the SSE headers, a
   * PassThrough body holding the `retry:` line (Koa sends the headers with it), no
   * compression, no socket timeout. Once the hub is ending, the stream ends at once.
   * `retryLine: false` opens it without that line, and keeps it alive with bare comment lines
   * (the LangGraph routes: LangGraph's SDK decodes a frame of its own for a lone `retry:`, or
   * for the blank line after a comment, an empty event; its server sends neither).
   */
  start(ctx: Context, options: { retryLine?: boolean } = {}): SseStream {
    const stream = new SseStream(ctx, this.maxBufferedBytes, () => this.remove(stream), options.retryLine ?? true);
    this.open.add(stream);
    this.options.onCount?.(this.open.size);
    this.heartbeat ??= setInterval(() => {
      for (const open of this.open) open.write(open.keepAlive);
    }, this.options.heartbeatMs);
    if (this.ending) stream.end();
    return stream;
  }

  /**
   * Counts an event stream of `principal` against the stream caps, or throws 429 over one.
   * Without authentication client addresses are counted. Returns the function that releases it.
   */
  admit(principal: Principal, address: string): () => void {
    return this.streamCaps.admit(principal, address);
  }

  /**
   * Counts a held wait (POST /api/runs/wait, an answer with `wait_ms`) of `principal` against
   * the wait cap, or throws 429 over it, and in the waits gauge. Returns the function that
   * releases it (once, however often it is called).
   */
  admitWait(principal: Principal, address: string): () => void {
    const release = this.waitCaps.admit(principal, address);
    this.countWaits(1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      release();
      this.countWaits(-1);
    };
  }

  /**
   * A held request to answer at shutdown: `end` is called by {@link endAll} (at once when the
   * hub is already ending). Returns the function that forgets it.
   */
  hold(end: () => void): () => void {
    if (this.ending) {
      end();
      return () => {};
    }
    this.held.add(end);
    return () => this.held.delete(end);
  }

  /** Ends every stream and held request, and any opened later (graceful shutdown): clients reconnect elsewhere. */
  endAll(): void {
    this.ending = true;
    for (const stream of this.open) stream.end();
    for (const end of [...this.held]) end();
    this.held.clear();
  }

  private countWaits(by: number): void {
    this.waits += by;
    this.options.onWaitCount?.(this.waits);
  }

  private remove(stream: SseStream): void {
    if (!this.open.delete(stream)) return;
    this.options.onCount?.(this.open.size);
    if (this.open.size === 0) {
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
    }
  }
}

/** Errors that only say the client went away: the normal end of a stream, not a failure. */
const CLIENT_GONE = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'ECONNRESET', 'EPIPE', 'ERR_STREAM_DESTROYED']);

/** `ctx.onerror` of a stream: Koa's, except for a client that went away (one shared function, not a closure per stream). */
function onerrorUnlessClientGone(this: Context, error: Error | null): void {
  if (CLIENT_GONE.has((error as NodeJS.ErrnoException | null)?.code ?? '')) return;
  (Object.getPrototypeOf(this) as Context).onerror.call(this, error as Error);
}

/** One client's event stream. Closes once, whichever side ends it. */
export class SseStream {
  private readonly body = new PassThrough();
  private readonly socket: Socket;
  private readonly closeHandlers: (() => void)[] = [];
  private closed = false;
  /** Most bytes this stream held at once (tests check the bound). */
  peakBufferedBytes = 0;
  /** What the hub's heartbeat writes to this stream. */
  readonly keepAlive: Buffer;

  constructor(
    ctx: Context,
    private readonly maxBufferedBytes: number,
    onClose: () => void,
    retryLine = true,
  ) {
    this.closeHandlers.push(onClose);
    this.socket = ctx.req.socket;
    this.socket.setTimeout(0);
    this.socket.setNoDelay(true);
    ctx.compress = false;
    ctx.status = 200;
    ctx.set({ 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no', Connection: 'close' });
    // The body ends with the connection: frames go out as they are, without chunk framing
    // (less work and garbage per delivery, which counts at 10k clients), and a stream that
    // ends always closes its connection, so clients reconnect on a fresh one.
    ctx.res.useChunkedEncodingByDefault = false;
    ctx.body = this.body;
    ctx.onerror = onerrorUnlessClientGone;
    // Koa destroys the body when the response closes, whichever side ended it.
    this.body.once('close', () => this.close());
    this.keepAlive = retryLine ? KEEP_ALIVE : BARE_KEEP_ALIVE;
    if (retryLine) this.body.write(`retry: ${SSE_RETRY_MS}\n\n`);
  }

  /** Bytes written to this stream that the client has not taken yet (beyond the socket's own buffer). */
  get bufferedBytes(): number {
    return this.body.writableLength + this.body.readableLength;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Sends one event as an `id:` / `data:` frame. */
  send(event: StoredEvent): void {
    this.write(frameOf(event));
  }

  /**
   * Sends an event that is on no stream as a `data:` frame without `id:`, so a client that
   * resumes later still resumes after the last event it had.
   */
  sendWithoutId(event: RunEvent): void {
    this.write(Buffer.from(`data: ${JSON.stringify(event)}\n\n`));
  }

  /**
   * Writes raw bytes; a client whose unread bytes pass the bound is disconnected, so a reader
   * that stopped costs at most `maxBufferedBytes` (plus one frame) of memory.
   */
  write(chunk: Buffer): void {
    if (this.closed) return;
    if (this.body.write(chunk)) return;
    const buffered = this.bufferedBytes;
    if (buffered > this.peakBufferedBytes) this.peakBufferedBytes = buffered;
    if (buffered > this.maxBufferedBytes) this.destroy();
  }

  /** Resolves when the client has taken what was written (the body drained) or the stream closed. */
  async drained(): Promise<void> {
    if (this.closed || !this.body.writableNeedDrain) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.body.off('drain', done);
        this.body.off('close', done);
        resolve();
      };
      this.body.once('drain', done);
      this.body.once('close', done);
    });
  }

  /** Runs `handler` once when the stream closes (at once if it already did). */
  onClose(handler: () => void): void {
    if (this.closed) handler();
    else this.closeHandlers.push(handler);
  }

  /** Ends the stream after what was written; the connection closes with it. */
  end(): void {
    if (!this.closed) this.body.end();
  }

  /** Drops the client now. */
  destroy(): void {
    this.close();
    this.socket.destroy();
    this.body.destroy();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const handler of this.closeHandlers.splice(0)) handler();
  }
}
