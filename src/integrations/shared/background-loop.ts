/**
 * A loop running in the background until stopped: `start()` runs `body` with a fresh abort
 * signal (nothing while it runs already); `stop()` aborts that signal and resolves once `body`
 * has returned, whatever it does on its way out. Both may be called any number of times, and a
 * stopped loop may be started again. `body` must not reject.
 */
export class BackgroundLoop {
  private running: { controller: AbortController; done: Promise<void>; stopped?: Promise<void> } | undefined;

  constructor(private readonly body: (signal: AbortSignal) => Promise<void>) {}

  start(): void {
    if (this.running) return;
    const controller = new AbortController();
    this.running = { controller, done: this.body(controller.signal) };
  }

  stop(): Promise<void> {
    const running = this.running;
    if (!running) return Promise.resolve();
    running.stopped ??= (async () => {
      running.controller.abort();
      await running.done;
      this.running = undefined;
    })();
    return running.stopped;
  }
}
