import { AppError } from '../../domain/errors.js';
import { IDEMPOTENCY_TTL_MS, type IdempotentStart } from '../../domain/idempotency.js';
import { newId, nowIso } from '../../domain/time.js';
import { ACTIVE_RUN_STATUSES, MAX_QUEUED_BEHIND, TERMINAL_RUN_STATUSES, type Run, type RunStatus } from '../../domain/types.js';
import type { ActiveRun, CreatedRun, NewRun, Page, Promotion, RunListOptions, RunStore, RunUpdate, UpdatedRun } from '../../ports/store.js';
import type { RedisContext } from './context.js';
import type { DurableWrites } from './durable.js';
import { flatToObject, metadataPairs, statePairs } from './hash.js';
import { SCRIPT_ARGS, type StateLimitArgs } from './script-args.js';
import { timerMember } from './timer-store.js';

/**
 * Runs on Redis: a hash per run, a sorted set per session, the tenant's active-runs set, its
 * run indexes (by status and agent, for the tenant-wide list) and a session's queue of runs
 * waiting behind its current one; creation, status changes and promotion are Lua. A run's deadline is also a member of the global timers set (written
 * before the run, removed when it ends: a timer without its run does nothing).
 */
/** How often a process re-adds a tenant to the global tenants set (expiry and the reaper visit its members). */
const TENANT_RELIST_MS = 60_000;

export class RedisRunStore implements RunStore {
  constructor(
    private readonly c: RedisContext,
    /** The limits a run's first checkpoint is written under (max bytes, max keys, retained). */
    private readonly stateLimits: () => StateLimitArgs,
    private readonly runsRetain: number,
    private readonly clock: () => number,
    /** WAIT for replicas before a created run is acknowledged (REDIS_WAIT_REPLICAS). */
    private readonly durable?: DurableWrites,
  ) {}

  /** When each tenant was last added to the tenants set by this process (ms). */
  private readonly tenantsListed = new Map<string, number>();

  private listedRecently(tenant: string, now: number): boolean {
    const last = this.tenantsListed.get(tenant);
    return last !== undefined && now >= last && now - last < TENANT_RELIST_MS;
  }

  private async listTenant(tenant: string, now: number): Promise<void> {
    await this.c.redis.sadd(this.c.keys.tenants(), tenant);
    if (this.tenantsListed.size >= 10_000) this.tenantsListed.clear();
    this.tenantsListed.set(tenant, now);
  }

  async createRun(tenant: string, run: NewRun): Promise<CreatedRun> {
    const { keys } = this.c;
    const now = this.clock();
    const metadata = metadataPairs(run.metadata ?? {}, false);
    // The tenant joins the set expiry and the reaper visit before its run is written (a global
    // key, outside the script's slot): a run whose later steps fail is still found and ended.
    // Members are never removed, so it is sent once a minute per tenant and process, not per
    // run (a set lost with a Redis restart is refilled within it).
    if (!this.listedRecently(tenant, now)) await this.listTenant(tenant, now);
    const replicated = this.durable?.track();
    if (run.deadline_ms !== undefined) await this.c.redis.zadd(keys.timers(), run.deadline_ms, timerMember('run', tenant, run.run_id));
    const reply = await this.c.script('createRun', this.createRunKeys(tenant, run), this.createRunArgs(tenant, run, now, metadata));
    const created: CreatedRun = toRun(flatToObject(reply[3] as unknown[]))!;
    if (Number(reply[2]) === 1) created.behind = true;
    if (Number(reply[4]) === 1) return { ...created, replayed: true };
    try {
      // The run's slot, and the timers' when written (the tenants set refills itself, above).
      await replicated?.([keys.run(tenant, run.run_id), ...(run.deadline_ms === undefined ? [] : [keys.timers()])]);
    } catch (error) {
      // Written, not confirmed: the caller enqueues the run's job first, then answers 503.
      if (error instanceof AppError) return { ...created, unconfirmed: error };
      throw error;
    }
    return created;
  }

  /** KEYS of createRun-14.lua. */
  private createRunKeys(tenant: string, run: NewRun): string[] {
    const { keys } = this.c;
    return [
      keys.session(tenant, run.session_id),
      keys.sessions(tenant),
      keys.sessionsByAgent(tenant, run.agent_id),
      keys.run(tenant, run.run_id),
      keys.runs(tenant, run.session_id),
      keys.state(tenant, run.session_id),
      keys.checkpoints(tenant, run.session_id),
      keys.sessionsByActivity(tenant),
      keys.sessionApprovals(tenant, run.session_id),
      keys.scheduleRuns(tenant),
      keys.activeRuns(tenant),
      keys.queuedBehind(tenant, run.session_id),
      keys.decidedApprovals(tenant),
      keys.idempotencyKey(tenant, run.idempotency?.scope ?? ''),
    ];
  }

  /** ARGV of createRun-14.lua: the declared fields, then the new session's metadata pairs and the input's state pairs. */
  private createRunArgs(tenant: string, run: NewRun, now: number, metadata: string[]): (string | number)[] {
    const { keys } = this.c;
    return SCRIPT_ARGS.createRun.encode(
      {
        sessionId: run.session_id,
        agentId: run.agent_id,
        runId: run.run_id,
        now: nowIso(() => now),
        nowMs: now,
        startNode: run.start?.node_id ?? '',
        checkpointId: newId(),
        ...this.stateLimits(),
        runsRetain: this.runsRetain,
        runPrefix: keys.runPrefix(tenant),
        approvalPrefix: keys.approvalPrefix(tenant),
        deadlineAt: run.deadline_ms === undefined ? '' : new Date(run.deadline_ms).toISOString(),
        behind: run.behind === true,
        maxQueuedBehind: MAX_QUEUED_BEHIND,
        runIndexPrefix: keys.runIndexPrefix(tenant),
        waited: run.waited === true,
        fingerprint: run.idempotency?.fingerprint ?? '',
        idempotencyTtlMs: IDEMPOTENCY_TTL_MS,
        graphInput: run.graph_input ?? '',
        metadataArgs: metadata.length,
      },
      [...metadata, ...statePairs(run.start?.input ?? {})],
    );
  }

  async hasIdempotencyKey(tenant: string, key: IdempotentStart): Promise<boolean> {
    return (await this.c.redis.exists(this.c.keys.idempotencyKey(tenant, key.scope))) === 1;
  }

  async getRunInput(tenant: string, runId: string): Promise<string | null> {
    return this.c.redis.hget(this.c.keys.run(tenant, runId), 'graph_input');
  }

  async getRun(tenant: string, runId: string): Promise<Run | null> {
    return toRun(await this.c.redis.hgetall(this.c.keys.run(tenant, runId)));
  }

  async listRuns(tenant: string, sessionId: string, page: Page): Promise<Run[]> {
    const ids = await this.c.redis.zrevrange(this.c.keys.runs(tenant, sessionId), page.offset, page.offset + page.limit - 1);
    const runs = await Promise.all(ids.map((id) => this.getRun(tenant, id)));
    return runs.filter((run): run is Run => run !== null);
  }

  async findRuns(tenant: string, options: RunListOptions): Promise<Run[]> {
    const { keys, redis } = this.c;
    const matches = (run: Run | null): run is Run =>
      run !== null && (options.status === undefined || run.status === options.status) && (options.agent_id === undefined || run.agent_id === options.agent_id);
    const { offset, limit } = options;
    if (options.session_id === undefined) {
      if (options.status !== undefined && ACTIVE_RUN_STATUSES.includes(options.status)) {
        // Active runs are not in the status indexes (a run would move three times): they are
        // the tenant's active-runs set, which the reaper also reads; newest first here.
        const ids = await redis.zrange(keys.activeRuns(tenant), '0', '-1');
        const runs = (await Promise.all(ids.map((id) => this.getRun(tenant, id)))).filter(matches);
        return runs.sort(newestFirst).slice(offset, offset + limit);
      }
      const ids = await redis.zrevrange(keys.runIndex(tenant, options), offset, offset + limit - 1);
      // A run whose status changed since the index was read is left out, not shown under a filter it no longer matches.
      return (await Promise.all(ids.map((id) => this.getRun(tenant, id)))).filter(matches);
    }
    if (options.status === undefined && options.agent_id === undefined) return this.listRuns(tenant, options.session_id, options);
    // A session's runs are bounded (runsRetain, plus the runs queued behind): filtered here.
    const ids = await redis.zrevrange(keys.runs(tenant, options.session_id), 0, -1);
    return (await Promise.all(ids.map((id) => this.getRun(tenant, id)))).filter(matches).slice(offset, offset + limit);
  }

  async latestRun(tenant: string, sessionId: string): Promise<Run | null> {
    const runId = await this.c.redis.hget(this.c.keys.session(tenant, sessionId), 'run_id');
    return runId ? this.getRun(tenant, runId) : null;
  }

  async updateRun(tenant: string, runId: string, update: RunUpdate): Promise<UpdatedRun> {
    const { keys } = this.c;
    const sessionId = (await this.c.redis.hget(keys.run(tenant, runId), 'session_id')) ?? '';
    // A missing run: the script answers NOT_FOUND for its (empty) hash.
    const now = this.clock();
    const reply = await this.c.script(
      'updateRun',
      [
        keys.run(tenant, runId),
        keys.session(tenant, sessionId),
        keys.sessionsByActivity(tenant),
        keys.activeRuns(tenant),
        keys.pendingApprovals(tenant),
        keys.queuedBehind(tenant, sessionId),
        keys.decidedApprovals(tenant),
      ],
      SCRIPT_ARGS.updateRun.encode({
        status: update.status,
        error: update.error ?? '',
        now: nowIso(() => now),
        from: (update.from ?? []).join(','),
        runId,
        sessionId,
        nowMs: now,
        by: update.by ?? 'system',
        approvalPrefix: keys.approvalPrefix(tenant),
        runIndexPrefix: keys.runIndexPrefix(tenant),
        sessionApprovals: keys.sessionApprovals(tenant, sessionId),
      }),
    );
    const run = toRun(flatToObject(reply[1] as unknown[]))!;
    if (Number(reply[0]) > 0) await this.c.redis.decrby(keys.pendingApprovalCount(), Number(reply[0]));
    if (run.deadline_at && TERMINAL_RUN_STATUSES.includes(run.status)) await this.c.redis.zrem(keys.timers(), timerMember('run', tenant, runId));
    return Number(reply[2]) > 0 ? { ...run, queued_behind: true } : run;
  }

  async deleteRun(tenant: string, runId: string): Promise<void> {
    const { keys } = this.c;
    const sessionId = (await this.c.redis.hget(keys.run(tenant, runId), 'session_id')) ?? '';
    // A missing run: the script answers NOT_FOUND for its (empty) hash.
    await this.c.script(
      'deleteRun',
      [
        keys.session(tenant, sessionId),
        keys.runs(tenant, sessionId),
        keys.sessionApprovals(tenant, sessionId),
        keys.scheduleRuns(tenant),
        keys.decidedApprovals(tenant),
        keys.run(tenant, runId),
      ],
      [runId, keys.runPrefix(tenant), keys.approvalPrefix(tenant), keys.runIndexPrefix(tenant)],
    );
  }

  async promoteNext(tenant: string, sessionId: string): Promise<Promotion> {
    const { keys } = this.c;
    const now = this.clock();
    const reply = await this.c.script(
      'promoteRun',
      [
        keys.session(tenant, sessionId),
        keys.state(tenant, sessionId),
        keys.checkpoints(tenant, sessionId),
        keys.sessionsByActivity(tenant),
        keys.activeRuns(tenant),
        keys.queuedBehind(tenant, sessionId),
      ],
      SCRIPT_ARGS.promoteRun.encode({
        now: nowIso(() => now),
        nowMs: now,
        checkpointId: newId(),
        ...this.stateLimits(),
        runPrefix: keys.runPrefix(tenant),
        sessionId,
        runIndexPrefix: keys.runIndexPrefix(tenant),
      }),
    );
    const [started, ...failed] = (reply as unknown[]).map(String);
    const runs = await Promise.all(failed.map((id) => this.getRun(tenant, id)));
    return { started: started ? await this.getRun(tenant, started) : null, failed: runs.filter((run): run is Run => run !== null) };
  }

  async listActiveRuns(updatedBeforeMs: number, limit: number): Promise<ActiveRun[]> {
    const { keys, redis } = this.c;
    const out: ActiveRun[] = [];
    for (const tenant of await redis.smembers(keys.tenants())) {
      if (out.length >= limit) break;
      const ids = await redis.zrangebyscore(keys.activeRuns(tenant), '-inf', updatedBeforeMs, 'LIMIT', 0, limit - out.length);
      for (const id of ids) {
        const run = await this.getRun(tenant, id);
        if (!run) {
          await redis.zrem(keys.activeRuns(tenant), id);
          continue;
        }
        const current = await redis.hget(keys.session(tenant, run.session_id), 'run_id');
        out.push({ tenant, run, behind: current !== run.id });
      }
    }
    return out;
  }
}

/** The order of the run indexes (ZREVRANGE by created_at ms, then by id). */
function newestFirst(a: Run, b: Run): number {
  const byTime = Date.parse(b.created_at) - Date.parse(a.created_at);
  return byTime !== 0 ? byTime : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

export function toRun(hash: Record<string, string>): Run | null {
  if (!hash.id) return null;
  const run: Run = {
    id: hash.id,
    session_id: hash.session_id ?? '',
    agent_id: hash.agent_id ?? '',
    status: hash.status as RunStatus,
    created_at: hash.created_at ?? '',
    updated_at: hash.updated_at ?? '',
  };
  if (hash.error) run.error = hash.error;
  if (hash.approval_id) run.approval_id = hash.approval_id;
  if (hash.deadline_at) run.deadline_at = hash.deadline_at;
  if (hash.seq_num) run.seq_num = Number(hash.seq_num);
  return run;
}
