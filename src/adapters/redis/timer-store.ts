import type { DueTimer, LeaseStore, TimerStore } from '../../ports/store.js';
import type { RedisContext } from './context.js';

/** The member of a timer in the global timers set: `<kind>|<tenant>|<id>` (neither holds a `|`). */
export function timerMember(kind: DueTimer['kind'], tenant: string, id: string): string {
  return `${kind}|${tenant}|${id}`;
}

/** Timers on Redis: one global sorted set scored by due time (ms), outside every tenant's slot. */
export class RedisTimerStore implements TimerStore {
  constructor(private readonly c: RedisContext) {}

  async due(nowMs: number, limit: number): Promise<DueTimer[]> {
    const reply = await this.c.redis.zrangebyscore(this.c.keys.timers(), '-inf', nowMs, 'WITHSCORES', 'LIMIT', 0, limit);
    const timers: DueTimer[] = [];
    for (let i = 0; i < reply.length; i += 2) {
      const [kind, tenant, ...rest] = reply[i]!.split('|');
      if ((kind === 'run' || kind === 'approval') && tenant && rest.length > 0) {
        timers.push({ kind, tenant, id: rest.join('|'), dueMs: Number(reply[i + 1]) });
      }
    }
    return timers;
  }

  async clear(timer: DueTimer): Promise<void> {
    await this.c.redis.zrem(this.c.keys.timers(), timerMember(timer.kind, timer.tenant, timer.id));
  }
}

/**
 * Leases on Redis, a key each: `acquire` is `SET NX PX` (never released early, it lapses);
 * `hold` and `drop` compare the holder and write in one script.
 */
export class RedisLeaseStore implements LeaseStore {
  constructor(private readonly c: RedisContext) {}

  async acquire(name: string, ttlMs: number): Promise<boolean> {
    return (await this.c.redis.set(this.c.keys.lease(name), String(process.pid), 'PX', ttlMs, 'NX')) === 'OK';
  }

  async hold(name: string, holder: string, ttlMs: number): Promise<boolean> {
    return (await this.c.script<number>('holdLease', [this.c.keys.lease(name)], [holder, Math.max(1, Math.round(ttlMs))])) === 1;
  }

  async drop(name: string, holder: string): Promise<void> {
    await this.c.script('dropLease', [this.c.keys.lease(name)], [holder]);
  }
}
