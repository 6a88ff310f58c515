import { DEFAULT_WEBHOOK_SLOTS } from '../../domain/run-webhook.js';
import { withTimeout } from '../../domain/timeout.js';
import type { WebhookConsumer, WebhookHandler, WebhookJob, WebhookQueue, WebhookRetryOptions, WebhookSlots } from '../../ports/webhook-queue.js';

/** Deliveries done (delivered, refused or out of attempts) whose run ids are kept to collapse a late second enqueue. */
const DONE_KEPT = 1000;

interface Ready {
  job: WebhookJob;
  attempt: number;
}

/**
 * The webhook queue and its consumer in one process (embedded mode): each delivery is attempted
 * as soon as a slot is free, and again on in-process timers (the pause doubling) until it is
 * done or out of attempts. A run's delivery is not queued twice while it waits, runs, or is
 * among the last {@link DONE_KEPT} done (as the Redis queue keeps its finished jobs), so the
 * process that ends a run and the one that deletes it may both enqueue it. Nothing survives
 * the process.
 *
 * Slots ({@link WebhookSlots}): at most `concurrency` attempts at once, at most `perTenant` of
 * them one tenant's. Attempts that are due wait in one line per tenant, and a free slot goes to
 * the next tenant in turn that has one due and is under its share (round robin), so a tenant
 * whose receiver hangs never holds the slots another tenant's delivery needs.
 */
export class MemoryWebhookQueue implements WebhookQueue, WebhookConsumer {
  /** Run ids of the deliveries waiting or running. */
  private readonly known = new Set<string>();
  /** Run ids of the last DONE_KEPT deliveries done, oldest first. */
  private readonly done = new Set<string>();
  /** Due attempts, one line per tenant; the map's order is the turn (a tenant served moves to the end). */
  private readonly ready = new Map<string, Ready[]>();
  /** Attempts running, per tenant. */
  private readonly held = new Map<string, number>();
  private active = 0;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly running = new Set<Promise<void>>();
  private handler: WebhookHandler | undefined;
  private onFailed: ((job: WebhookJob, error: Error) => void) | undefined;
  private closed = false;
  private readonly slots: WebhookSlots;

  constructor(
    private readonly options: WebhookRetryOptions,
    slots: WebhookSlots = DEFAULT_WEBHOOK_SLOTS,
  ) {
    this.slots = { concurrency: slots.concurrency, perTenant: Math.min(slots.perTenant, slots.concurrency) };
  }

  async enqueue(job: WebhookJob): Promise<void> {
    if (this.closed) throw new Error('The webhook queue is closed.');
    if (this.known.has(job.run_id) || this.done.has(job.run_id)) return;
    this.known.add(job.run_id);
    this.due(job, 1);
  }

  start(handler: WebhookHandler, onFailed?: (job: WebhookJob, error: Error) => void): void {
    this.handler = handler;
    this.onFailed = onFailed;
    this.pump();
  }

  /** An attempt is due: it waits in its tenant's line for a slot. */
  private due(job: WebhookJob, attempt: number): void {
    const line = this.ready.get(job.tenant);
    if (line) line.push({ job, attempt });
    else this.ready.set(job.tenant, [{ job, attempt }]);
    this.pump();
  }

  /** Gives free slots to due attempts, tenant by tenant in turn, each tenant within its share. */
  private pump(): void {
    if (!this.handler || this.closed) return;
    while (this.active < this.slots.concurrency) {
      const next = [...this.ready.entries()].find(([tenant]) => (this.held.get(tenant) ?? 0) < this.slots.perTenant);
      if (!next) return;
      const [tenant, line] = next;
      const { job, attempt } = line.shift()!;
      // Its turn is taken: the tenant goes to the end of the order (or out of it, with nothing left due).
      this.ready.delete(tenant);
      if (line.length > 0) this.ready.set(tenant, line);
      this.attempt(job, attempt);
    }
  }

  private attempt(job: WebhookJob, attempt: number): void {
    this.active += 1;
    this.held.set(job.tenant, (this.held.get(job.tenant) ?? 0) + 1);
    const task = this.handler!(job, attempt)
      .then(
        () => this.finish(job.run_id),
        (error: unknown) => this.failed(job, attempt, error instanceof Error ? error : new Error(String(error))),
      )
      .finally(() => {
        this.running.delete(task);
        this.active -= 1;
        const held = (this.held.get(job.tenant) ?? 1) - 1;
        if (held > 0) this.held.set(job.tenant, held);
        else this.held.delete(job.tenant);
        this.pump();
      });
    this.running.add(task);
  }

  /** A delivery is done for good: its run id moves to the ones kept done. */
  private finish(runId: string): void {
    this.known.delete(runId);
    this.done.add(runId);
    if (this.done.size > DONE_KEPT) this.done.delete(this.done.values().next().value!);
  }

  private failed(job: WebhookJob, attempt: number, error: Error): void {
    if (attempt >= this.options.attempts || this.closed) {
      this.finish(job.run_id);
      this.onFailed?.(job, error);
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.due(job, attempt + 1);
    }, this.options.backoffMs * 2 ** (attempt - 1));
    timer.unref();
    this.timers.add(timer);
  }

  async close(timeoutMs = 10_000): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.ready.clear();
    // Attempts still running past the bound are left to finish on their own (their delivery is not tried again).
    await withTimeout(Promise.allSettled([...this.running]), timeoutMs).catch(() => undefined);
  }
}
