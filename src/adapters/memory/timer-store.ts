import type { DueTimer, LeaseStore, TimerStore } from '../../ports/store.js';
import { timerKey, type MemoryTables } from './tables.js';

/** Timers in memory: run deadlines and approval expiries, on the shared tables. */
export class MemoryTimerStore implements TimerStore {
  constructor(private readonly t: MemoryTables) {}

  async due(nowMs: number, limit: number): Promise<DueTimer[]> {
    return [...this.t.timers.values()]
      .filter((timer) => timer.dueMs <= nowMs)
      .sort((a, b) => a.dueMs - b.dueMs)
      .slice(0, limit)
      .map((timer) => ({ ...timer }));
  }

  async clear(timer: DueTimer): Promise<void> {
    const key = timerKey(timer.kind, timer.tenant, timer.id);
    if (this.t.timers.get(key)?.dueMs === timer.dueMs) this.t.timers.delete(key);
  }
}

/** Leases in memory, on the tables' clock; a lease lapses unless its holder drops it. */
export class MemoryLeaseStore implements LeaseStore {
  private readonly leases = new Map<string, { holder: string | undefined; untilMs: number }>();

  constructor(private readonly clock: () => number) {}

  async acquire(name: string, ttlMs: number): Promise<boolean> {
    if (this.heldByOther(name, undefined)) return false;
    this.leases.set(name, { holder: undefined, untilMs: this.clock() + ttlMs });
    return true;
  }

  async hold(name: string, holder: string, ttlMs: number): Promise<boolean> {
    if (this.heldByOther(name, holder)) return false;
    this.leases.set(name, { holder, untilMs: this.clock() + ttlMs });
    return true;
  }

  async drop(name: string, holder: string): Promise<void> {
    if (this.leases.get(name)?.holder === holder) this.leases.delete(name);
  }

  /** Whether `name` is held, unlapsed, by anyone but `holder` (an `acquire` is nobody's to extend). */
  private heldByOther(name: string, holder: string | undefined): boolean {
    const lease = this.leases.get(name);
    return lease !== undefined && lease.untilMs > this.clock() && (holder === undefined || lease.holder !== holder);
  }
}
