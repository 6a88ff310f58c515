import { request, type ClientRequest } from 'node:http';
import { performance } from 'node:perf_hooks';
import { isCluster, type RedisClient } from '../../src/adapters/redis/connection.js';

/** How a run stopped, as GET /api/events/stream or the Redis events channel told it. */
export interface RunStop {
  type: 'completed' | 'failed' | 'cancelled';
  /** The event's `ts` in ms (millisecond resolution, stamped by the process that ended the run). */
  tsMs: number;
  /** performance.now() when the frame arrived here. */
  receivedAt: number;
}

const END_TYPES = ['completed', 'failed', 'cancelled'] as const;

/** Where the benchmark learns the server-side end of each run (see {@link RunEventStream}, {@link ChannelRunStops}). */
export interface RunStops {
  stop(runId: string): RunStop | undefined;
  /** Waits until the end of each of `runIds` arrived or `timeoutMs` passed; resolves with how many are missing. */
  waitFor(runIds: string[], timeoutMs: number): Promise<number>;
  close(): void;
}

/** The ends recorded so far, and the waiters woken when one arrives: what each source of ends shares. */
abstract class StopBook implements RunStops {
  private readonly stops = new Map<string, RunStop>();
  private readonly waiters = new Set<() => void>();

  abstract close(): void;

  stop(runId: string): RunStop | undefined {
    return this.stops.get(runId);
  }

  protected record(event: { type: RunStop['type']; run_id: string; ts: string }): boolean {
    if (!END_TYPES.includes(event.type) || this.stops.has(event.run_id)) return false;
    this.stops.set(event.run_id, { type: event.type, tsMs: Date.parse(event.ts), receivedAt: performance.now() });
    return true;
  }

  protected wake(): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const wake of waiters) wake();
  }

  async waitFor(runIds: string[], timeoutMs: number): Promise<number> {
    const missing = () => runIds.filter((id) => !this.stops.has(id)).length;
    const deadline = performance.now() + timeoutMs;
    while (missing() > 0 && performance.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - performance.now()));
        this.waiters.add(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return missing();
  }
}

/**
 * The ends of the tenant's runs read on the Redis events channel by the benchmark's own
 * subscriber (Redis mode): the API under test serves no extra stream, so what it does for a
 * wait is measured alone.
 */
export class ChannelRunStops extends StopBook {
  private readonly onMessage: (channel: string, message: string) => void;

  constructor(
    private readonly subscriber: RedisClient,
    channel: string,
  ) {
    super();
    this.onMessage = (ch, message) => {
      if (ch !== channel || !END_TYPES.some((t) => message.includes(`"type":"${t}"`))) return;
      const { event } = JSON.parse(message) as { event: { type: RunStop['type']; run_id: string; ts: string } };
      if (this.record(event)) this.wake();
    };
    subscriber.on(isCluster(subscriber) ? 'smessage' : 'message', this.onMessage);
  }

  close(): void {
    this.subscriber.off(isCluster(this.subscriber) ? 'smessage' : 'message', this.onMessage);
  }
}

/**
 * One GET /api/events/stream held for the whole benchmark: records the end event (`completed`,
 * `failed`, `cancelled`) of every run of the tenant, for the server-side completion times.
 */
export class RunEventStream extends StopBook {
  private req: ClientRequest | undefined;
  private buffer = '';
  private closed = false;

  private constructor() {
    super();
  }

  /** Opens the stream; resolves once its first bytes (the `retry:` line) arrived. */
  static open(apiUrl: string): Promise<RunEventStream> {
    const stream = new RunEventStream();
    return new Promise((resolve, reject) => {
      const req = request(`${apiUrl}/api/events/stream`, { headers: { accept: 'text/event-stream' } }, (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`GET /api/events/stream answered ${res.statusCode}`));
          res.resume();
          return;
        }
        res.setEncoding('utf8');
        let first = true;
        res.on('data', (chunk: string) => {
          stream.read(chunk);
          if (first) {
            first = false;
            resolve(stream);
          }
        });
        res.on('end', () => {
          if (!stream.closed) console.error('GET /api/events/stream ended early: server-side times will be missing.');
        });
        res.on('error', () => {});
      });
      req.on('error', (error) => (stream.closed ? undefined : reject(error)));
      req.end();
      stream.req = req;
    });
  }

  close(): void {
    this.closed = true;
    this.req?.destroy();
  }

  private read(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    let found = false;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const frame = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      // Five events per echo run: only the ends are parsed.
      if (!END_TYPES.some((t) => frame.includes(`"type":"${t}"`))) continue;
      const data = frame.split('\n').find((line) => line.startsWith('data: '));
      if (!data) continue;
      if (this.record(JSON.parse(data.slice(6)) as { type: RunStop['type']; run_id: string; ts: string })) found = true;
    }
    if (found) this.wake();
  }
}
