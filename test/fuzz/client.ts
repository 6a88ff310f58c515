import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import type { FuzzRequest } from './draft.js';

/** What came back. */
export interface FuzzResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** A `text/event-stream` answer, cut off once its head arrived. */
  streamed: boolean;
  /**
   * Whether the kept-alive connection answered a next request; undefined when not tried
   * (not asked for, a stream, or the server closed the connection).
   */
  reusable?: boolean;
}

export interface SendOptions {
  /** @defaultValue 10000 */
  timeoutMs?: number;
  /** Send a second request on the same kept-alive connection and record whether it is answered. */
  checkConnection?: boolean;
}

/** For reads of the harness itself (seeding, snapshots): kept-alive connections shared by all. */
const shared = new Agent({ keepAlive: true, maxSockets: 8 });
const NEXT_REQUEST_TIMEOUT_MS = 2000;

/**
 * Sends a request byte for byte (node:http, so bodies, duplicate parameters and headers are
 * exactly as generated). A `text/event-stream` answer is aborted once its head arrived.
 * Rejects when no complete answer comes within the timeout. With `checkConnection` the request
 * gets a connection of its own, and a `GET /` follows it on that connection.
 */
export async function send(baseUrl: string, req: FuzzRequest, options: SendOptions = {}): Promise<FuzzResponse> {
  if (!options.checkConnection) return once(baseUrl, req, shared, options.timeoutMs ?? 10_000);
  const own = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const res = await once(baseUrl, req, own, options.timeoutMs ?? 10_000);
    if (res.streamed || res.headers.connection === 'close') return res;
    const next = await once(baseUrl, { method: 'GET', target: '/', headers: {}, chunked: false, mutations: [] }, own, NEXT_REQUEST_TIMEOUT_MS).then(
      () => true,
      () => false,
    );
    return { ...res, reusable: next };
  } finally {
    own.destroy();
  }
}

function once(baseUrl: string, req: FuzzRequest, agent: Agent, timeoutMs: number): Promise<FuzzResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...req.headers };
    if (req.body && !req.chunked) headers['Content-Length'] = String(req.body.length);
    const outgoing = request({ host: url.hostname, port: url.port, method: req.method, path: req.target, headers, agent }, (res) => {
      if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
        clearTimeout(timer);
        res.destroy();
        outgoing.destroy();
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: '', streamed: true });
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', fail);
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), streamed: false });
      });
    });
    const timer = setTimeout(() => {
      outgoing.destroy();
      fail(new Error(`no complete answer within ${timeoutMs} ms`));
    }, timeoutMs);
    function fail(error: Error): void {
      clearTimeout(timer);
      reject(error);
    }
    outgoing.on('error', fail);
    if (req.body && req.chunked) {
      const half = Math.floor(req.body.length / 2);
      outgoing.write(req.body.subarray(0, half));
      outgoing.end(req.body.subarray(half));
    } else outgoing.end(req.body);
  });
}

/** GET `target` and parse the JSON answer (for seeding and snapshots). */
export async function getJson(baseUrl: string, target: string): Promise<{ status: number; body: unknown }> {
  const response = await send(baseUrl, { method: 'GET', target, headers: {}, chunked: false, mutations: [] });
  return { status: response.status, body: response.text ? (JSON.parse(response.text) as unknown) : undefined };
}
