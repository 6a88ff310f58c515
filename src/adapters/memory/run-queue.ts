import type { AgentQueueDepth, RunConsumer, RunHandler, RunJob, RunQueue, TenantQueueDepth } from '../../ports/run-queue.js';
import { liveJobIds, runJobId } from '../../domain/run-jobs.js';
import { setLongTimeout, type LongTimer } from '../../domain/long-timer.js';
import { agentCapOf, cappedAgents, DEFAULT_FAIR_SHARE, queueFull, shareOf, type FairShare } from '../../domain/fair-share.js';
import { AgentSlots } from './agent-slots.js';

export interface MemoryRunQueueOptions {
  /** Jobs executed at once. @defaultValue 8 */
  concurrency?: number;
  /** How tenants share the slots. @defaultValue DEFAULT_FAIR_SHARE */
  fairShare?: FairShare;
  /** Reports a job whose handler threw (the embedded mode has no retry). */
  onError?: (job: RunJob, error: unknown) => void;
}

/**
 * The RunQueue and its consumer in one process (embedded mode): jobs wait in one FIFO per
 * tenant and are admitted to the `concurrency` slots by the port's rule (the tenant ring,
 * weights, running caps, agent caps; the Redis adapter's Lua script is the same rule). A job id
 * waiting or running is not queued twice.
 */
export class MemoryRunQueue implements RunQueue, RunConsumer {
  /** Waiting jobs of each tenant, in admission order; a tenant with none has no entry. */
  private readonly pending = new Map<string, RunJob[]>();
  /** Tenants with waiting jobs, the one whose turn it is first; each with the picks left in its turn. */
  private readonly ring: string[] = [];
  private readonly credit = new Map<string, number>();
  private readonly admitted = new Map<string, number>();
  /** Ids of the jobs waiting, delayed or running. */
  private readonly known = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  /** Timers of delayed jobs (a start with `delayMs`, up to 30 days: past one setTimeout), by job id. */
  private readonly delayed = new Map<string, { timer: LongTimer; tenant: string }>();
  private handler: RunHandler | undefined;
  private onFailed: ((job: RunJob, error: Error) => void) | undefined;
  private closed = false;
  private readonly fair: FairShare;
  /** The capped agents' slots and the jobs parked at their caps. */
  private readonly agents: AgentSlots;

  constructor(private readonly options: MemoryRunQueueOptions = {}) {
    this.fair = options.fairShare ?? DEFAULT_FAIR_SHARE;
    this.agents = new AgentSlots((agent) => agentCapOf(this.fair, agent), (job) => this.unparked(job));
  }

  async enqueue(job: RunJob, options: { delayMs?: number } = {}): Promise<void> {
    if (this.closed) throw new Error('The run queue is closed.');
    const id = runJobId(job);
    if (this.known.has(id)) return;
    this.known.add(id);
    if (options.delayMs && options.delayMs > 0) {
      // Delayed: known (a live job, counted as queued) until it is due, then it waits its turn.
      const timer = setLongTimeout(
        () => {
          this.delayed.delete(id);
          if (this.closed) return;
          this.wait(job);
          this.pump();
        },
        options.delayMs,
        { unref: true },
      );
      this.delayed.set(id, { timer, tenant: job.tenant });
      return;
    }
    this.wait(job);
    this.pump();
  }

  async checkRoom(tenant: string): Promise<void> {
    const { maxQueued } = shareOf(this.fair, tenant);
    const queued = this.queued(tenant);
    if (maxQueued > 0 && queued >= maxQueued) throw queueFull(queued, maxQueued);
  }

  async withdraw(run: { tenant: string; id: string; approval_id?: string }): Promise<void> {
    const ids = new Set(liveJobIds(run));
    for (const id of ids) {
      const delayed = this.delayed.get(id);
      if (!delayed) continue;
      delayed.timer.clear();
      this.delayed.delete(id);
      this.known.delete(id);
    }
    for (const id of this.agents.withdraw(run.tenant, ids)) this.known.delete(id);
    const jobs = this.pending.get(run.tenant);
    if (jobs) {
      const kept = jobs.filter((job) => !ids.has(runJobId(job)));
      for (const job of jobs) if (ids.has(runJobId(job))) this.known.delete(runJobId(job));
      if (kept.length > 0) this.pending.set(run.tenant, kept);
      else this.leaveRing(run.tenant);
    }
    // A withdrawn job that held a slot of its agent handed it to the agent's next parked job.
    this.pump();
  }

  async depth(tenant: string): Promise<TenantQueueDepth> {
    return { tenant, queued: this.queued(tenant), running: this.admitted.get(tenant) ?? 0 };
  }

  async depths(limit: number): Promise<TenantQueueDepth[]> {
    const tenants = new Set([...this.pending.keys(), ...this.admitted.keys(), ...[...this.delayed.values()].map((d) => d.tenant), ...this.agents.tenants()]);
    const all = await Promise.all([...tenants].map((tenant) => this.depth(tenant)));
    return all.sort((a, b) => b.queued - a.queued || b.running - a.running || a.tenant.localeCompare(b.tenant)).slice(0, limit);
  }

  async agentDepths(): Promise<AgentQueueDepth[]> {
    return cappedAgents(this.fair).map(([agent, max]) => ({ agent, ...this.agents.depth(agent), max }));
  }

  start(handler: RunHandler, onFailed?: (job: RunJob, error: Error) => void): void {
    this.handler = handler;
    this.onFailed = onFailed;
    this.pump();
  }

  async hasLiveJob(run: { id: string; approval_id?: string }): Promise<boolean> {
    return liveJobIds(run).some((id) => this.known.has(id));
  }

  async liveWorkers(): Promise<number> {
    return this.handler && !this.closed ? 1 : 0;
  }

  /** Jobs of the tenant waiting for a slot, delayed and parked ones included. */
  private queued(tenant: string): number {
    let delayed = 0;
    for (const entry of this.delayed.values()) if (entry.tenant === tenant) delayed += 1;
    return (this.pending.get(tenant)?.length ?? 0) + delayed + this.agents.parkedOf(tenant);
  }

  /** A parked job handed a slot of its agent: back to the head of its tenant's FIFO (the place it had). */
  private unparked(job: RunJob): void {
    const jobs = this.pending.get(job.tenant);
    if (jobs) jobs.unshift(job);
    else {
      this.pending.set(job.tenant, [job]);
      this.ring.push(job.tenant);
    }
  }

  /** Puts a job in its tenant's FIFO: a resume at the head (its run keeps its place), a start at the tail. */
  private wait(job: RunJob): void {
    const jobs = this.pending.get(job.tenant);
    if (jobs) {
      if (job.kind === 'resume') jobs.unshift(job);
      else jobs.push(job);
      return;
    }
    this.pending.set(job.tenant, [job]);
    this.ring.push(job.tenant);
  }

  private leaveRing(tenant: string): void {
    this.pending.delete(tenant);
    this.credit.delete(tenant);
    const at = this.ring.indexOf(tenant);
    if (at >= 0) this.ring.splice(at, 1);
  }

  /**
   * The admission rule: the tenant first in the ring gives its head job, unless it is at its
   * running cap (then it waits for the next turn); after `weight` jobs, or none left, its turn
   * passes to the next tenant. A head job whose agent is at its cap is parked (it waits for one
   * of the agent's runs to end) and the tenant's next job is looked at instead.
   */
  private next(): RunJob | undefined {
    for (let skipped = 0; skipped < this.ring.length; ) {
      const tenant = this.ring[0]!;
      const share = shareOf(this.fair, tenant);
      if (share.maxRunning > 0 && (this.admitted.get(tenant) ?? 0) >= share.maxRunning) {
        this.ring.push(this.ring.shift()!);
        skipped += 1;
        continue;
      }
      const jobs = this.pending.get(tenant)!;
      const job = jobs.shift()!;
      if (!this.agents.take(job)) {
        if (jobs.length === 0) this.leaveRing(tenant);
        continue;
      }
      const left = (this.credit.get(tenant) ?? share.weight) - 1;
      if (jobs.length === 0) this.leaveRing(tenant);
      else if (left > 0) this.credit.set(tenant, left);
      else {
        this.credit.delete(tenant);
        this.ring.push(this.ring.shift()!);
      }
      return job;
    }
    return undefined;
  }

  private pump(): void {
    const concurrency = this.options.concurrency ?? 8;
    while (this.handler && !this.closed && this.running.size < concurrency) {
      const job = this.next();
      if (!job) return;
      this.admitted.set(job.tenant, (this.admitted.get(job.tenant) ?? 0) + 1);
      const task = this.handler(job)
        .catch((error: unknown) => {
          // Nothing retries in one process: the job failed for good.
          this.options.onError?.(job, error);
          this.onFailed?.(job, error instanceof Error ? error : new Error(String(error)));
        })
        .finally(() => {
          this.known.delete(runJobId(job));
          const admitted = (this.admitted.get(job.tenant) ?? 1) - 1;
          if (admitted > 0) this.admitted.set(job.tenant, admitted);
          else this.admitted.delete(job.tenant);
          this.agents.release(job);
          this.running.delete(task);
          this.pump();
        });
      this.running.add(task);
    }
  }

  async close(timeoutMs = 10_000): Promise<void> {
    this.closed = true;
    for (const { timer } of this.delayed.values()) timer.clear();
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
