import type { Logger } from 'pino';
import { setLongTimeout, type LongTimer } from '../domain/long-timer.js';

/** Runs `task` every `everyMs` until the returned function is called; a failure is logged and retried next time. */
export function every(everyMs: number, task: () => Promise<unknown>, logger: Logger, what: string): () => void {
  let stopped = false;
  let timer: LongTimer | undefined;
  const loop = () => {
    task()
      .catch((err: unknown) => logger.warn({ err }, `${what} failed; retrying at the next pass`))
      .finally(() => {
        if (stopped) return;
        timer = setLongTimeout(loop, everyMs, { unref: true });
      });
  };
  loop();
  return () => {
    stopped = true;
    timer?.clear();
  };
}
