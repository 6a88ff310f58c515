/**
 * The background tasks of an adapter (handler calls and the replies they post), so that
 * `stop()` can wait for them. Each task handles and logs its own errors; a rejection that
 * escapes anyway is passed to `onEscape` rather than becoming an unhandled rejection.
 */
export class InFlight {
  private readonly tasks = new Set<Promise<void>>();

  constructor(private readonly onEscape: (error: unknown) => void) {}

  /** Starts `task` now and tracks it until it settles; the returned promise never rejects. */
  run(task: () => Promise<void>): Promise<void> {
    const promise = task()
      .catch(this.onEscape)
      .finally(() => this.tasks.delete(promise));
    this.tasks.add(promise);
    return promise;
  }

  /** Resolves once every task, including those started while waiting, has settled. */
  async drain(): Promise<void> {
    while (this.tasks.size > 0) await Promise.allSettled([...this.tasks]);
  }
}
