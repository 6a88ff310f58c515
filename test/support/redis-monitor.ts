import { EventEmitter } from 'node:events';
import { connect } from 'node:net';

/** A command MONITOR reported: its time (seconds, as Redis prints it), arguments, client address (`lua` inside a script) and database. */
export type MonitorListener = (time: string, args: string[], source: string, database: string) => void;

/** A MONITOR connection: `monitor` events, one per command the server runs, in its order. */
export interface CommandMonitor {
  on(event: 'monitor', listener: MonitorListener): this;
  disconnect(): void;
}

/**
 * Opens a MONITOR connection to the Redis at `url` (or a port on 127.0.0.1) and resolves once
 * the server has acknowledged it, so every command sent after that is reported.
 *
 * Not ioredis's `monitor()`: it switches to reading monitor lines only after the MONITOR reply's
 * promise has settled, so on a busy server, where lines arrive in the same read as that reply,
 * it fails with "Command queue state error" (seen here under load). This reads the replies
 * itself: `+OK`, then one `+<time> [<db> <source>] "arg" …` line per command.
 */
export function monitorRedis(url: string | number): Promise<CommandMonitor> {
  const { hostname, port } = typeof url === 'number' ? { hostname: '127.0.0.1', port: String(url) } : new URL(url);
  const socket = connect({ host: hostname || '127.0.0.1', port: Number(port || 6379) });
  const emitter = new EventEmitter();
  const monitor: CommandMonitor = {
    on(event, listener) {
      emitter.on(event, listener);
      return this;
    },
    disconnect: () => socket.destroy(),
  };
  return new Promise((resolve, reject) => {
    let buffered = '';
    let acknowledged = false;
    socket.setEncoding('utf8');
    socket.once('error', reject);
    socket.on('connect', () => socket.write('MONITOR\r\n'));
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      for (let end = buffered.indexOf('\r\n'); end >= 0; end = buffered.indexOf('\r\n')) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (!acknowledged) {
          if (line !== '+OK') return reject(new Error(`MONITOR answered ${line}`));
          acknowledged = true;
          socket.off('error', reject);
          socket.on('error', () => undefined);
          resolve(monitor);
          continue;
        }
        const seen = parseMonitorLine(line);
        if (seen) emitter.emit('monitor', seen.time, seen.args, seen.source, seen.database);
      }
    });
  });
}

/** `+1700000000.123456 [0 127.0.0.1:5000] "set" "a\"b" "1"` → its parts; undefined for any other line. */
export function parseMonitorLine(line: string): { time: string; database: string; source: string; args: string[] } | undefined {
  const head = /^\+(\d+\.\d+) \[(\d+) ([^\]]+)\] /.exec(line);
  if (!head) return undefined;
  const args: string[] = [];
  let at = head[0].length;
  while (at < line.length) {
    if (line[at] !== '"') return undefined;
    let arg = '';
    for (at += 1; at < line.length && line[at] !== '"'; at += 1) {
      if (line[at] !== '\\') {
        arg += line[at];
        continue;
      }
      const next = line[(at += 1)];
      if (next === 'x') {
        arg += String.fromCharCode(parseInt(line.slice(at + 1, at + 3), 16));
        at += 2;
      } else arg += ({ n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b' } as Record<string, string>)[next!] ?? next;
    }
    args.push(arg);
    at += 2; // the closing quote and the space after it
  }
  return { time: head[1]!, database: head[2]!, source: head[3]!, args };
}
