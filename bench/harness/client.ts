import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

/** One answered request: status and parsed JSON body (undefined when not JSON). */
export interface JsonReply<T> {
  status: number;
  body: T;
  text: string;
}

/** {@link ApiClient} requests that also count into `requests`. */
export interface ScopedClient {
  requests: number;
  post<T>(path: string, body: unknown, kind?: string): Promise<JsonReply<T>>;
  get<T>(path: string, kind?: string): Promise<JsonReply<T>>;
}

/**
 * JSON requests to the API over keep-alive loopback sockets, counted by route (`kind`), so a
 * flow reports the requests it actually made.
 */
export class ApiClient {
  private readonly agent: Agent;
  readonly counts = new Map<string, number>();

  constructor(
    private readonly apiUrl: string,
    sockets: number,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets: sockets });
  }

  post<T>(path: string, body: unknown, kind = `POST ${path}`): Promise<JsonReply<T>> {
    return this.send<T>('POST', path, JSON.stringify(body), kind);
  }

  get<T>(path: string, kind = `GET ${path}`): Promise<JsonReply<T>> {
    return this.send<T>('GET', path, undefined, kind);
  }

  /** The same requests, also counted in `requests` of the returned view (one round trip's own). */
  scoped(): ScopedClient {
    const view: ScopedClient = {
      requests: 0,
      post: (path, body, kind) => {
        view.requests += 1;
        return this.post(path, body, kind);
      },
      get: (path, kind) => {
        view.requests += 1;
        return this.get(path, kind);
      },
    };
    return view;
  }

  /** Requests made since the last reset. */
  total(): number {
    return [...this.counts.values()].reduce((sum, n) => sum + n, 0);
  }

  resetCounts(): void {
    this.counts.clear();
  }

  close(): void {
    this.agent.destroy();
  }

  private send<T>(method: string, path: string, body: string | undefined, kind: string): Promise<JsonReply<T>> {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
    const headers: Record<string, string | number> = body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    return new Promise((resolve, reject) => {
      const req = request(`${this.apiUrl}${path}`, { method, agent: this.agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body: parsed as T, text });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Wall-clock ms (the clock of the API's `ts` and `created_at`) of a `performance.now()` reading,
 * to a fraction of a ms: Date.now() is floored to the ms, so the largest of many
 * `Date.now() - performance.now()` samples taken across ms boundaries is the offset.
 */
export function wallClock(): (perfMs: number) => number {
  let offset = -Infinity;
  const until = performance.now() + 20;
  while (performance.now() < until) offset = Math.max(offset, Date.now() - performance.now());
  return (perfMs) => offset + perfMs;
}

/**
 * `clients` loops that each run `one(i)` to its end before the next, until `runs` were started;
 * resolves with first start → last end in ms. Rejects past `timeoutMs`.
 */
export async function closedLoop(clients: number, runs: number, timeoutMs: number, one: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const client = async () => {
    while (next < runs) await one(next++);
  };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`closed loop of ${runs} with ${clients} clients timed out after ${timeoutMs} ms (${next} started)`)), timeoutMs);
  });
  const started = performance.now();
  try {
    await Promise.race([Promise.all(Array.from({ length: Math.min(clients, runs) }, client)), timeout]);
  } finally {
    clearTimeout(timer);
  }
  return performance.now() - started;
}
