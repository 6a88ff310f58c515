import type { Logger } from 'pino';

/** Runs `task` every `everyMs` until the returned function is called; a failure is logged and retried next time. */
export function every(everyMs: number, task: () => Promise<unknown>, logger: Logger, what: string): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const loop = () => {
    task()
      .catch((err: unknown) => logger.warn({ err }, `${what} failed; retrying at the next pass`))
      .finally(() => {
        if (stopped) return;
        timer = setTimeout(loop, everyMs);
        timer.unref();
      });
  };
  loop();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
