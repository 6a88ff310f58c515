import { withTimeout } from '../../domain/timeout.js';
import type { WebhookConsumer, WebhookHandler, WebhookJob, WebhookQueue, WebhookRetryOptions } from '../../ports/webhook-queue.js';

/**
 * The webhook queue and its consumer in one process (embedded mode): each delivery is attempted
 * at once, and again on in-process timers (the pause doubling) until it is done or out of
 * attempts. A run's delivery waiting or running is not queued twice. Nothing survives the process.
 */
export class MemoryWebhookQueue implements WebhookQueue, WebhookConsumer {
  private readonly known = new Set<string>();
  /** Enqueued before `start`: attempted once a handler is there. */
  private readonly waiting: WebhookJob[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly running = new Set<Promise<void>>();
  private handler: WebhookHandler | undefined;
  private onFailed: ((job: WebhookJob, error: Error) => void) | undefined;
  private closed = false;

  constructor(private readonly options: WebhookRetryOptions) {}

  async enqueue(job: WebhookJob): Promise<void> {
    if (this.closed) throw new Error('The webhook queue is closed.');
    if (this.known.has(job.run_id)) return;
    this.known.add(job.run_id);
    if (this.handler) this.attempt(job, 1);
    else this.waiting.push(job);
  }

  start(handler: WebhookHandler, onFailed?: (job: WebhookJob, error: Error) => void): void {
    this.handler = handler;
    this.onFailed = onFailed;
    for (const job of this.waiting.splice(0)) this.attempt(job, 1);
  }

  private attempt(job: WebhookJob, attempt: number): void {
    if (this.closed) return;
    const task = this.handler!(job, attempt)
      .then(
        () => {
          this.known.delete(job.run_id);
        },
        (error: unknown) => this.failed(job, attempt, error instanceof Error ? error : new Error(String(error))),
      )
      .finally(() => this.running.delete(task));
    this.running.add(task);
  }

  private failed(job: WebhookJob, attempt: number, error: Error): void {
    if (attempt >= this.options.attempts || this.closed) {
      this.known.delete(job.run_id);
      this.onFailed?.(job, error);
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.attempt(job, attempt + 1);
    }, this.options.backoffMs * 2 ** (attempt - 1));
    timer.unref();
    this.timers.add(timer);
  }

  async close(timeoutMs = 10_000): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    // Attempts still running past the bound are left to finish on their own (their delivery is not tried again).
    await withTimeout(Promise.allSettled([...this.running]), timeoutMs).catch(() => undefined);
  }
}
