import type { SessionLatest, StorageLimits, StorageUsage, Store, ThreadRow } from '../../ports/store.js';
import { masters, pingAll, type RedisClient } from './connection.js';
import { RedisKeys } from './keys.js';
import { RedisApprovalStore } from './approval-store.js';
import type { DurableWrites } from './durable.js';
import { redisContext } from './context.js';
import { mapFailures } from './errors.js';
import { RedisRunStore } from './run-store.js';
import { RedisScheduleStore } from './schedule-store.js';
import { RedisSessionStore } from './session-store.js';
import { RedisLeaseStore, RedisTimerStore } from './timer-store.js';
import { DEFAULT_STORAGE_LIMITS } from '../../domain/types.js';

export interface RedisStoreOptions {
  /** Prefix of every key. @defaultValue agentplane */
  keyPrefix?: string;
  /** @defaultValue {@link DEFAULT_STORAGE_LIMITS} */
  limits?: Partial<StorageLimits>;
  /** The time writes are stamped with and expiry compares against. @defaultValue Date.now */
  clock?: () => number;
  /**
   * WAIT for replicas on this connection before a created run, an approval decision or a
   * checkpoint patch is acknowledged (REDIS_WAIT_REPLICAS). @defaultValue none
   */
  durable?: DurableWrites | undefined;
}

/**
 * The Store port on Redis, composed of its parts on one command connection (which belongs to
 * the caller). Per-tenant keys share the tenant's hash tag, so each Lua script (checkpoint
 * append and merge, run creation, approval decisions, schedule fires) touches one slot.
 * Every part answers AppError `unavailable` when Redis is unreachable.
 */
export class RedisStore implements Store {
  readonly sessions: RedisSessionStore;
  readonly runs: RedisRunStore;
  readonly approvals: RedisApprovalStore;
  readonly schedules: RedisScheduleStore;
  readonly timers: RedisTimerStore;
  readonly leases: RedisLeaseStore;
  private readonly keys: RedisKeys;

  constructor(
    private readonly redis: RedisClient,
    options: RedisStoreOptions = {},
  ) {
    const context = redisContext(redis, options.keyPrefix ?? 'agentplane');
    this.keys = context.keys;
    const clock = options.clock ?? Date.now;
    const limits = { ...DEFAULT_STORAGE_LIMITS, ...options.limits };
    const sessions = new RedisSessionStore(context, limits, clock, options.durable);
    this.sessions = mapFailures(sessions);
    this.runs = mapFailures(new RedisRunStore(context, () => sessions.stateLimits(), limits.runsRetain, clock, options.durable));
    this.approvals = mapFailures(new RedisApprovalStore(context, clock, options.durable));
    this.schedules = mapFailures(new RedisScheduleStore(context));
    this.timers = mapFailures(new RedisTimerStore(context));
    this.leases = mapFailures(new RedisLeaseStore(context));
  }

  latestOfSessions(tenant: string, sessionIds: readonly string[], maxStateBytes: number): Promise<SessionLatest[]> {
    return this.sessions.latestOfSessions(tenant, sessionIds, maxStateBytes);
  }

  listThreadRows(tenant: string, page: { offset: number; limit: number }, maxStateBytes: number): Promise<ThreadRow[]> {
    return this.sessions.listThreadRows(tenant, page, maxStateBytes);
  }

  /** PING; on a cluster every master, and the cluster's state (readiness). */
  async ping(): Promise<void> {
    await pingAll(this.redis);
  }

  /** Memory and keys summed over the server, or over every master of a cluster (tenants' slots differ: no pipeline). */
  async usage(): Promise<StorageUsage> {
    const tenants = await this.redis.smembers(this.keys.tenants());
    const [sessions, schedules, servers] = await Promise.all([
      Promise.all(tenants.map((tenant) => this.redis.zcard(this.keys.sessions(tenant)))),
      this.redis.hlen(this.keys.scheduleTenants()),
      Promise.all(masters(this.redis).map(async (node) => [await node.info('memory'), await node.dbsize()] as const)),
    ]);
    return {
      memoryBytes: servers.reduce((sum, [info]) => sum + Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? Number.NaN), 0),
      sessions: sessions.reduce((sum, n) => sum + n, 0),
      schedules,
      keys: servers.reduce((sum, [, keys]) => sum + keys, 0),
    };
  }
}
