import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a fake platform received. */
export interface RecordedCall {
  method: string;
  /** Path without the query string. */
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** Parsed JSON, else the text, else null for an empty body. */
  body: unknown;
}

/** How a fake platform answers one call. */
export type Answer =
  | { status: number; body?: unknown; headers?: Record<string, string> }
  /** Closes the socket without answering, as a failing network would. */
  | { destroy: true };

/** Answers a call; `closed` aborts when the client goes away before the answer (long polls). */
export type Responder = (call: RecordedCall, closed: AbortSignal) => Answer | Promise<Answer>;

/**
 * A real HTTP server on 127.0.0.1 and a free port that records every call and answers with
 * the one-shot answers a test queued (first match wins) or else with the platform's default.
 */
export class RecordingServer {
  readonly calls: RecordedCall[] = [];
  private readonly queued: { match: (call: RecordedCall) => boolean; answer: Answer }[] = [];
  private readonly server = createServer((req, res) => {
    const closed = new AbortController();
    res.on('close', () => closed.abort());
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const call: RecordedCall = {
        method: req.method ?? '',
        path: decodeURIComponent(url.pathname),
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body: parse(Buffer.concat(chunks).toString('utf8')),
      };
      this.calls.push(call);
      void this.answer(call, closed.signal).then((answer) => send(res, answer));
    });
  });
  url = '';

  private constructor(private readonly respond: Responder) {}

  /** Starts a server answering with `respond` unless a queued answer matches. */
  static async start(respond: Responder): Promise<RecordingServer> {
    const fake = new RecordingServer(respond);
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    fake.url = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
    return fake;
  }

  /** Answers the next call for which `match` holds with `answer`, once. */
  queue(match: (call: RecordedCall) => boolean, answer: Answer): void {
    this.queued.push({ match, answer });
  }

  /** Calls whose path ends with `suffix`, in arrival order. */
  callsTo(suffix: string): RecordedCall[] {
    return this.calls.filter((call) => call.path.endsWith(suffix));
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private async answer(call: RecordedCall, closed: AbortSignal): Promise<Answer> {
    const index = this.queued.findIndex((entry) => entry.match(call));
    if (index >= 0) return this.queued.splice(index, 1)[0]!.answer;
    return this.respond(call, closed);
  }
}

function parse(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function send(res: ServerResponse, answer: Answer): void {
  if ('destroy' in answer) {
    res.socket?.destroy();
    return;
  }
  if (res.destroyed) return;
  res.writeHead(answer.status, { 'Content-Type': 'application/json', ...answer.headers });
  res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
}
