import { runJobId } from '../../domain/run-jobs.js';
import type { RunJob } from '../../domain/types.js';

/** The jobs of one agent parked at its cap: a FIFO per tenant, and the tenants in turn. */
interface Parked {
  ring: string[];
  jobs: Map<string, RunJob[]>;
}

/**
 * The agent caps of the embedded run queue (the Redis adapter's includes/admitRuns.lua is the
 * same rule): the slots each capped agent's runs hold (admitted, or waiting with one handed to
 * them), and the jobs parked because their agent was at its cap when their turn came. A slot
 * given back goes to the agent's next parked job, its tenants in turn; that job goes back to the
 * head of its tenant's jobs (`unparked`), holding the slot until its tenant's turn admits it.
 * An agent without a cap costs a lookup of its cap.
 */
export class AgentSlots {
  /** Slots held by the runs of each capped agent. */
  private readonly held = new Map<string, number>();
  /** Jobs waiting that hold a slot of their agent, by job id (their agent). */
  private readonly holding = new Map<string, string>();
  private readonly parked = new Map<string, Parked>();

  constructor(
    private readonly capOf: (agent: string) => number,
    private readonly unparked: (job: RunJob) => void,
  ) {}

  /** Whether the job, its turn come, takes a slot of its agent; false: its agent is at its cap and the job is parked. */
  take(job: RunJob): boolean {
    const cap = this.capOf(job.agent_id);
    if (cap <= 0 || this.holding.delete(runJobId(job))) return true;
    const held = this.held.get(job.agent_id) ?? 0;
    if (held >= cap) {
      this.park(job);
      return false;
    }
    this.held.set(job.agent_id, held + 1);
    return true;
  }

  /** The job admitted is done: its agent's slot goes to the agent's next parked job. */
  release(job: RunJob): void {
    if (this.capOf(job.agent_id) <= 0) return;
    this.giveBack(job.agent_id);
  }

  /** Takes the jobs of `ids` out (their run ended before their turn); returns the ids of those that were parked. */
  withdraw(tenant: string, ids: ReadonlySet<string>): string[] {
    const removed: string[] = [];
    for (const [agent, parked] of this.parked) {
      const jobs = parked.jobs.get(tenant);
      if (!jobs) continue;
      const kept = jobs.filter((job) => !ids.has(runJobId(job)));
      if (kept.length === jobs.length) continue;
      for (const job of jobs) if (ids.has(runJobId(job))) removed.push(runJobId(job));
      if (kept.length > 0) parked.jobs.set(tenant, kept);
      else this.dropTenant(agent, parked, tenant);
    }
    for (const id of ids) {
      const agent = this.holding.get(id);
      if (agent === undefined) continue;
      this.holding.delete(id);
      this.giveBack(agent);
    }
    return removed;
  }

  /** Jobs of the tenant parked, all agents together. */
  parkedOf(tenant: string): number {
    let count = 0;
    for (const parked of this.parked.values()) count += parked.jobs.get(tenant)?.length ?? 0;
    return count;
  }

  /** The agent's runs admitted (its slots but those handed to jobs still waiting) and its jobs parked. */
  depth(agent: string): { running: number; waiting: number } {
    let handed = 0;
    for (const holder of this.holding.values()) if (holder === agent) handed += 1;
    let waiting = 0;
    for (const jobs of this.parked.get(agent)?.jobs.values() ?? []) waiting += jobs.length;
    return { running: (this.held.get(agent) ?? 0) - handed, waiting };
  }

  /** The tenants with jobs parked. */
  tenants(): Set<string> {
    const tenants = new Set<string>();
    for (const parked of this.parked.values()) for (const tenant of parked.ring) tenants.add(tenant);
    return tenants;
  }

  private park(job: RunJob): void {
    let parked = this.parked.get(job.agent_id);
    if (!parked) this.parked.set(job.agent_id, (parked = { ring: [], jobs: new Map() }));
    const jobs = parked.jobs.get(job.tenant);
    if (!jobs) {
      parked.jobs.set(job.tenant, [job]);
      parked.ring.push(job.tenant);
    } else if (job.kind === 'resume') jobs.unshift(job);
    else jobs.push(job);
  }

  /** A slot of the agent is free: its next parked job (tenants in turn) takes it, or the count goes down. */
  private giveBack(agent: string): void {
    const parked = this.parked.get(agent);
    const tenant = parked?.ring.shift();
    if (!parked || tenant === undefined) {
      const held = (this.held.get(agent) ?? 1) - 1;
      if (held > 0) this.held.set(agent, held);
      else this.held.delete(agent);
      return;
    }
    const jobs = parked.jobs.get(tenant)!;
    const job = jobs.shift()!;
    if (jobs.length > 0) parked.ring.push(tenant);
    else parked.jobs.delete(tenant);
    if (parked.ring.length === 0) this.parked.delete(agent);
    this.holding.set(runJobId(job), agent);
    this.unparked(job);
  }

  private dropTenant(agent: string, parked: Parked, tenant: string): void {
    parked.jobs.delete(tenant);
    parked.ring.splice(parked.ring.indexOf(tenant), 1);
    if (parked.ring.length === 0) this.parked.delete(agent);
  }
}
