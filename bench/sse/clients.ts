import { connect, type Socket } from 'node:net';
import { sleep } from '../harness/client.js';

/** Where the benchmark's event carries its send time: `"run_id":"<wall-clock ms>"`. */
const MARK = '"run_id":"';
const now = () => performance.timeOrigin + performance.now();

interface Client {
  socket: Socket;
  /** Events received so far. */
  received: number;
  /** Whether this client timestamps what it reads (the others read only at the end). */
  timed: boolean;
}

/**
 * N idle SSE clients on raw sockets (an EventSource per connection would cost more memory
 * than the server side being measured). The server writes every event to every client; so
 * that the benchmark process does not compete with the server for the CPU, only an evenly
 * spread sample of clients reads as events arrive and records publish → receive latency,
 * the others leave the frames in their socket buffers and count them at the end.
 */
export class SseClientPool {
  private readonly clients: Client[] = [];
  /** publish → receive latency of every event at every timed client, in ms. */
  readonly latenciesMs: number[] = [];
  /** Connections that ended or failed before the pool closed them. */
  dropped = 0;
  private closing = false;

  /** @param timedEvery every how many clients one reads at once and records latencies */
  constructor(
    private readonly port: number,
    private readonly timedEvery = 1,
    private readonly path = '/api/events/stream',
  ) {}

  get size(): number {
    return this.clients.length;
  }

  get timed(): number {
    return this.clients.filter((c) => c.timed).length;
  }

  /** Opens `count` streams, `parallel` at a time; resolves once each has its `retry:` line. */
  async open(count: number, parallel = 200): Promise<void> {
    let next = 0;
    const lane = async () => {
      while (next < count) {
        const timed = next % this.timedEvery === 0;
        next += 1;
        this.clients.push(await this.openOne(timed));
      }
    };
    await Promise.all(Array.from({ length: Math.min(parallel, count) }, lane));
  }

  /** The latencies recorded since the last call. */
  takeLatencies(): number[] {
    return this.latenciesMs.splice(0);
  }

  /** Resolves once every timed client received `events` events in all, or after `timeoutMs`. */
  async waitForTimed(events: number, timeoutMs: number): Promise<void> {
    await this.until(() => this.clients.every((c) => !c.timed || c.received >= events), timeoutMs);
  }

  /** Lets every client read, and resolves once each received `events` events or `timeoutMs` passed; returns how many were received. */
  async drainAll(events: number, timeoutMs: number): Promise<number> {
    for (const client of this.clients) client.socket.resume();
    await this.until(() => this.clients.every((c) => c.received >= events), timeoutMs);
    return this.clients.reduce((sum, c) => sum + Math.min(c.received, events), 0);
  }

  close(): void {
    this.closing = true;
    for (const client of this.clients.splice(0)) client.socket.destroy();
  }

  private async until(done: () => boolean, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done() && Date.now() < deadline) await sleep(50);
  }

  private openOne(timed: boolean): Promise<Client> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port: this.port, host: '127.0.0.1' });
      const client: Client = { socket, received: 0, timed };
      let pending = '';
      let opened = false;
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
          if (!timed) socket.pause();
          resolve(client);
        }
        let from = 0;
        let last = 0;
        for (;;) {
          const mark = text.indexOf(MARK, from);
          if (mark === -1) break;
          const start = mark + MARK.length;
          const stop = text.indexOf('"', start);
          if (stop === -1) break;
          client.received += 1;
          if (timed) this.latenciesMs.push(at - Number(text.slice(start, stop)));
          from = last = stop;
        }
        // Keep only what may hold the beginning of a mark that is not complete yet.
        pending = text.slice(Math.max(last, text.length - 64));
      });
      socket.write(`GET ${this.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`);
    });
  }
}
