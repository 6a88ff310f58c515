import { request, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { EventSource } from 'eventsource';
import type { RunEvent } from '../../src/domain/types.js';
import { waitFor } from './wait.js';

/**
 * The two SSE clients of the tests: {@link watch}, a WHATWG EventSource that reconnects with
 * Last-Event-ID as a browser does, and {@link openRaw}, a hand-rolled reader on a raw HTTP
 * response that can stop reading. {@link readFrames} parses any event-stream response
 * (POST /api/runs/stream too).
 */

/** One event as a client received it. */
export interface Received {
  id: string;
  event: RunEvent;
}

/** A WHATWG EventSource (the `eventsource` package) that records what it receives and sends. */
export interface Watcher {
  source: EventSource;
  /** Every event received, in order, across reconnections. */
  received: Received[];
  /** The Last-Event-ID header of each request it made (null when none), in order. */
  requests: (string | null)[];
  /** `X-Served-By` of every (re)connection answered 2xx, in order. */
  servedBy: string[];
  /** Status of every (re)connection attempt's response (or 0 when it failed), in order. */
  attempts: number[];
  /** Waits until `count` events arrived. */
  waitForCount(count: number, timeoutMs?: number): Promise<Received[]>;
  /** Waits until `count` requests were answered with an open stream. */
  waitForOpen(count?: number, timeoutMs?: number): Promise<void>;
  /** Waits for an event matching `predicate`; the error names the connection attempts. */
  waitForEvent(predicate: (e: Received) => boolean, timeoutMs?: number): Promise<Received>;
  close(): void;
}

export interface WatchOptions {
  /** Extra headers on every request (credentials). */
  headers?: Record<string, string>;
  /** Sent as Last-Event-ID on the first request, as a browser does on a reconnect. */
  lastEventId?: string;
}

/** Opens an EventSource on `url` that records every event, request and connection. */
export function watch(url: string, options: WatchOptions = {}): Watcher {
  const received: Received[] = [];
  const requests: (string | null)[] = [];
  const servedBy: string[] = [];
  const attempts: number[] = [];
  let opens = 0;
  const source = new EventSource(url, {
    fetch: async (input, init) => {
      const headers = new Headers(init?.headers as ConstructorParameters<typeof Headers>[0]);
      for (const [name, value] of Object.entries(options.headers ?? {})) headers.set(name, value);
      if (requests.length === 0 && options.lastEventId) headers.set('Last-Event-ID', options.lastEventId);
      requests.push(headers.get('last-event-id'));
      try {
        const response = await fetch(input, { ...init, headers });
        attempts.push(response.status);
        if (response.ok) servedBy.push(response.headers.get('x-served-by') ?? '?');
        return response;
      } catch (error) {
        attempts.push(0);
        throw error;
      }
    },
  });
  source.addEventListener('open', () => (opens += 1));
  source.onmessage = (message) => received.push({ id: message.lastEventId, event: JSON.parse(message.data as string) as RunEvent });
  const detail = () => `connection attempts ${attempts.join(',') || 'none'}, served by ${servedBy.join(',')}, state ${source.readyState}, ${received.length} events`;
  const explained = (error: unknown): never => {
    throw new Error(`${(error as Error).message} (${detail()})`, { cause: error });
  };
  return {
    source,
    received,
    requests,
    servedBy,
    attempts,
    waitForCount: async (count, timeoutMs = 20_000) => {
      await waitFor(`${count} events (have ${received.length})`, () => received.length >= count, timeoutMs).catch(explained);
      return received;
    },
    waitForOpen: (count = 1, timeoutMs = 20_000) =>
      waitFor(`${count} open stream(s)`, () => opens >= count && source.readyState === source.OPEN, timeoutMs).then(() => {}, explained),
    waitForEvent: (predicate, timeoutMs = 20_000) => waitFor('an SSE event', () => received.find(predicate), timeoutMs).catch(explained),
    close: () => source.close(),
  };
}

/** One parsed block of an event stream. */
export interface Frame {
  id?: string;
  data?: string;
  retry?: number;
  comment?: string;
}

/** A hand-rolled SSE client on a raw HTTP response: cheap, and able to stop reading. */
export interface RawStream {
  status: number;
  headers: IncomingHttpHeaders;
  socket: Socket;
  frames: Frame[];
  /** Resolves when the server ended the response or the connection closed. */
  ended: Promise<void>;
  waitForFrames(predicate: (frames: Frame[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
  /** Stops reading: the socket stays open and its receive buffer fills. */
  pause(): void;
  resume(): void;
  destroy(): void;
}

export function parseFrame(block: string): Frame {
  const frame: Frame = {};
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) frame.comment = line.slice(1).trim();
    else if (line.startsWith('id: ')) frame.id = line.slice(4);
    else if (line.startsWith('data: ')) frame.data = line.slice(6);
    else if (line.startsWith('retry: ')) frame.retry = Number(line.slice(7));
  }
  return frame;
}

/**
 * The frames of an event-stream response as they arrive, its whole text, and when it ended
 * (`finished`: it ended normally, not by an error or a dropped socket).
 */
export function readFrames(res: IncomingMessage): { frames: Frame[]; text: () => string; ended: Promise<void>; finished: () => boolean } {
  const frames: Frame[] = [];
  let all = '';
  let pending = '';
  let finished = false;
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    all += chunk;
    pending += chunk;
    let end: number;
    while ((end = pending.indexOf('\n\n')) !== -1) {
      frames.push(parseFrame(pending.slice(0, end)));
      pending = pending.slice(end + 2);
    }
  });
  const ended = new Promise<void>((done) => {
    res.once('end', () => {
      finished = true;
      done();
    });
    res.once('close', () => done());
    res.once('error', () => done());
  });
  return { frames, text: () => all, ended, finished: () => finished };
}

/** GET `url` and resolve once the response headers arrived; frames are parsed as they come. */
export function openRaw(url: string, headers: Record<string, string> = {}): Promise<RawStream> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { Accept: 'text/event-stream', ...headers }, agent: false });
    req.once('error', reject);
    req.once('response', (res) => {
      const { frames, ended } = readFrames(res);
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        socket: res.socket,
        frames,
        ended,
        waitForFrames: (predicate, what, timeoutMs = 15_000) => waitFor(what, () => predicate(frames), timeoutMs).then(() => {}),
        pause: () => {
          res.pause();
          res.socket.pause();
        },
        resume: () => {
          res.socket.resume();
          res.resume();
        },
        destroy: () => req.destroy(),
      });
    });
    req.end();
  });
}

/** Events of the frames that carry one, as `{ id, event }`. */
export function eventsOf(frames: Frame[]): Received[] {
  return frames.filter((f) => f.data !== undefined).map((f) => ({ id: f.id!, event: JSON.parse(f.data!) as RunEvent }));
}
