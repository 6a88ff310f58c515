import type { RunConsumer, RunHandler, RunJob, RunQueue } from '../../ports/run-queue.js';
import { liveJobIds, runJobId } from '../../domain/run-jobs.js';
import { setLongTimeout, type LongTimer } from '../../domain/long-timer.js';

export interface MemoryRunQueueOptions {
  /** Jobs executed at once. @defaultValue 8 */
  concurrency?: number;
  /** Reports a job whose handler threw (the embedded mode has no retry). */
  onError?: (job: RunJob, error: unknown) => void;
}

/**
 * The RunQueue and its consumer in one process (embedded mode): a FIFO with a concurrency
 * bound; a job id waiting or running is not queued twice.
 */
export class MemoryRunQueue implements RunQueue, RunConsumer {
  private readonly waiting: RunJob[] = [];
  private readonly known = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  /** Timers of delayed jobs (a start with `delayMs`, up to 30 days: past one setTimeout). */
  private readonly delayed = new Set<LongTimer>();
  private handler: RunHandler | undefined;
  private onFailed: ((job: RunJob, error: Error) => void) | undefined;
  private closed = false;

  constructor(private readonly options: MemoryRunQueueOptions = {}) {}

  async enqueue(job: RunJob, options: { delayMs?: number } = {}): Promise<void> {
    if (this.closed) throw new Error('The run queue is closed.');
    const id = runJobId(job);
    if (this.known.has(id)) return;
    this.known.add(id);
    if (options.delayMs && options.delayMs > 0) {
      // Delayed: known (a live job) until it is due, then queued as any job.
      const timer = setLongTimeout(
        () => {
          this.delayed.delete(timer);
          if (this.closed) return;
          this.waiting.push(job);
          this.pump();
        },
        options.delayMs,
        { unref: true },
      );
      this.delayed.add(timer);
      return;
    }
    this.waiting.push(job);
    this.pump();
  }

  start(handler: RunHandler, onFailed?: (job: RunJob, error: Error) => void): void {
    this.handler = handler;
    this.onFailed = onFailed;
    this.pump();
  }

  async hasLiveJob(run: { id: string; approval_id?: string }): Promise<boolean> {
    return liveJobIds(run).some((id) => this.known.has(id));
  }


  private pump(): void {
    const concurrency = this.options.concurrency ?? 8;
    while (this.handler && !this.closed && this.running.size < concurrency && this.waiting.length > 0) {
      const job = this.waiting.shift()!;
      const task = this.handler(job)
        .catch((error: unknown) => {
          // Nothing retries in one process: the job failed for good.
          this.options.onError?.(job, error);
          this.onFailed?.(job, error instanceof Error ? error : new Error(String(error)));
        })
        .finally(() => {
          this.known.delete(runJobId(job));
          this.running.delete(task);
          this.pump();
        });
      this.running.add(task);
    }
  }

  async close(timeoutMs = 10_000): Promise<void> {
    this.closed = true;
    for (const timer of this.delayed) timer.clear();
    this.delayed.clear();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref();
    });
    await Promise.race([Promise.allSettled([...this.running]), timeout]);
    clearTimeout(timer);
  }
}
