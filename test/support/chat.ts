import Koa, { type Middleware } from 'koa';
import { pino, type Logger } from 'pino';
import { expect, onTestFinished } from 'vitest';
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

/** What a chat adapter test works with: the adapter's URL, the fake platform, the adapter, its log. */
export interface MountedAdapter<F, A> {
  /** The adapter's endpoint on its Koa app (`<server>/<path>`). */
  url: string;
  fake: F;
  adapter: A;
  /** Every record the adapter logged. */
  logs: Record<string, unknown>[];
}

/**
 * The setup of every chat adapter test (Discord, Slack, Telegram): `make` builds the adapter
 * with a logger the test reads, its middleware is mounted on a Koa app of its own, and once
 * the test ends, pass or fail, the adapter is stopped, the app closed and the fake platform
 * closed, in that order. Call inside a test.
 */
export async function mountAdapter<F extends { close(): Promise<void> }, A extends { middleware(): Middleware; stop(): Promise<void> }>(
  fake: F,
  path: string,
  make: (logger: Logger) => A,
): Promise<MountedAdapter<F, A>> {
  onTestFinished(() => fake.close());
  const { logger, records } = captureLogger();
  const adapter = make(logger);
  const server = await mount(adapter.middleware());
  // onTestFinished hooks run newest first: the adapter stops before its server and the fake close.
  onTestFinished(() => server.close());
  onTestFinished(() => adapter.stop());
  return { url: `${server.url}${path}`, fake, adapter, logs: records };
}

/**
 * Stops a chat adapter while its handler is still running, and checks that stop() waits for it:
 * stop() resolves only after `finish` (which lets the handler answer) was called, a turn after
 * stop() was (a stop that does not wait resolves first).
 */
export async function expectStopWaitsForHandler(adapter: { stop(): Promise<void> }, finish: () => void): Promise<void> {
  let finished = false;
  const finishedAtStop = adapter.stop().then(() => finished);
  setImmediate(() => {
    finished = true;
    finish();
  });
  expect(await finishedAtStop, 'stop() resolved while the handler was still running').toBe(true);
}
