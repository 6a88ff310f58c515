import Koa, { type Middleware } from 'koa';
import { pino, type Logger } from 'pino';
import { listen, type ListeningServer } from '../../src/http/listen.js';

/** Mounts middleware on a Koa app of its own, as an operator would, on 127.0.0.1 and a free port. */
export async function mount(...middleware: Middleware[]): Promise<ListeningServer> {
  const app = new Koa();
  for (const entry of middleware) app.use(entry);
  return listen(app, { port: 0, host: '127.0.0.1' });
}

/** A pino logger whose records a test can read. */
export function captureLogger(): { logger: Logger; records: Record<string, unknown>[] } {
  const records: Record<string, unknown>[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void records.push(JSON.parse(line)) });
  return { logger, records };
}
