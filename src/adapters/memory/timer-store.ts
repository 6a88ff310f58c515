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

/** Leases in memory, on the tables' clock; a lease is never released early, it lapses. */
export class MemoryLeaseStore implements LeaseStore {
  private readonly leases = new Map<string, number>();

  constructor(private readonly clock: () => number) {}

  async acquire(name: string, ttlMs: number): Promise<boolean> {
    const now = this.clock();
    if ((this.leases.get(name) ?? 0) > now) return false;
    this.leases.set(name, now + ttlMs);
    return true;
  }
}
