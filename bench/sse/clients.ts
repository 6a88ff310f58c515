import { connect, type Socket } from 'node:net';

/** Where the benchmark's event carries its send time: `"run_id":"<wall-clock ms>"`. */
const MARK = '"run_id":"';
const now = () => performance.timeOrigin + performance.now();

/**
 * N idle SSE clients on raw sockets (an EventSource per connection would cost more memory
 * than the server side being measured). Each records, per event, the receive time minus the
 * send time carried in the event.
 */
export class SseClientPool {
  private readonly sockets: Socket[] = [];
  /** publish → receive latency of every event at every client, in ms. */
  readonly latenciesMs: number[] = [];
  /** Connections that ended or failed before the pool closed them. */
  dropped = 0;
  private closing = false;

  constructor(
    private readonly port: number,
    private readonly path = '/api/events/stream',
  ) {}

  get size(): number {
    return this.sockets.length;
  }

  /** Opens `count` streams, `parallel` at a time; resolves once each has its `retry:` line. */
  async open(count: number, parallel = 200): Promise<void> {
    let next = 0;
    const lane = async () => {
      while (next < count) {
        next += 1;
        this.sockets.push(await this.openOne());
      }
    };
    await Promise.all(Array.from({ length: Math.min(parallel, count) }, lane));
  }

  /** Resolves once every client received `events` events, or after `timeoutMs` (then some are missing). */
  async waitForAll(events: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.latenciesMs.length < events * this.sockets.length && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  close(): void {
    this.closing = true;
    for (const socket of this.sockets.splice(0)) socket.destroy();
  }

  private openOne(): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port: this.port, host: '127.0.0.1' });
      let pending = '';
      let opened = false;
      socket.setNoDelay(true);
      socket.once('error', (error) => {
        if (!opened) reject(error);
      });
      socket.once('close', () => {
        if (opened && !this.closing) this.dropped += 1;
      });
      socket.on('data', (chunk: Buffer) => {
        const at = now();
        const text = pending + chunk.toString('latin1');
        if (!opened && text.includes('retry: ')) {
          opened = true;
          resolve(socket);
        }
        let from = 0;
        let last = 0;
        for (;;) {
          const mark = text.indexOf(MARK, from);
          if (mark === -1) break;
          const start = mark + MARK.length;
          const stop = text.indexOf('"', start);
          if (stop === -1) break;
          this.latenciesMs.push(at - Number(text.slice(start, stop)));
          from = last = stop;
        }
        // Keep only what may hold the beginning of a mark that is not complete yet.
        pending = text.slice(Math.max(last, text.length - 64));
      });
      socket.write(`GET ${this.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`);
    });
  }
}
