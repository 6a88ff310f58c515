import { AppError } from '../../domain/errors.js';
import { newId, nowIso } from '../../domain/time.js';
import type { Run, RunStatus } from '../../domain/types.js';
import type { NewRun, Page, RunStore, RunUpdate } from '../../ports/store.js';
import type { RedisContext } from './context.js';
import { flatToObject, statePairs } from './hash.js';

/** Runs on Redis: a hash per run and a sorted set per session; creation and status changes are Lua. */
export class RedisRunStore implements RunStore {
  constructor(
    private readonly c: RedisContext,
    /** The limits a run's first checkpoint is written under (max bytes, max keys, retained). */
    private readonly limitArgs: () => number[],
    private readonly runsRetain: number,
    private readonly clock: () => number,
  ) {}

  async createRun(tenant: string, run: NewRun): Promise<Run> {
    const { keys } = this.c;
    const now = this.clock();
    const reply = await this.c.script(
      'createRun',
      [
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
      ],
      [
        run.session_id,
        run.agent_id,
        run.run_id,
        nowIso(() => now),
        now,
        run.start?.node_id ?? '',
        newId(),
        ...this.limitArgs(),
        this.runsRetain,
        keys.runPrefix(tenant),
        keys.approvalPrefix(tenant),
        ...statePairs(run.start?.input ?? {}),
      ],
    );
    // A tenant's first session makes it one that expiry visits (a global key, outside the script's slot).
    if (Number(reply[1]) === 1) await this.c.redis.sadd(keys.tenants(), tenant);
    const created = await this.getRun(tenant, run.run_id);
    if (!created) throw new AppError('internal', 'A created run could not be read back.');
    return created;
  }

  async getRun(tenant: string, runId: string): Promise<Run | null> {
    return toRun(await this.c.redis.hgetall(this.c.keys.run(tenant, runId)));
  }

  async listRuns(tenant: string, sessionId: string, page: Page): Promise<Run[]> {
    const ids = await this.c.redis.zrevrange(this.c.keys.runs(tenant, sessionId), page.offset, page.offset + page.limit - 1);
    const runs = await Promise.all(ids.map((id) => this.getRun(tenant, id)));
    return runs.filter((run): run is Run => run !== null);
  }

  async latestRun(tenant: string, sessionId: string): Promise<Run | null> {
    const runId = await this.c.redis.hget(this.c.keys.session(tenant, sessionId), 'run_id');
    return runId ? this.getRun(tenant, runId) : null;
  }

  async updateRun(tenant: string, runId: string, update: RunUpdate): Promise<Run> {
    const { keys } = this.c;
    const sessionId = await this.c.redis.hget(keys.run(tenant, runId), 'session_id');
    // A missing run: the script answers NOT_FOUND for its (empty) hash.
    const now = this.clock();
    const reply = await this.c.script(
      'updateRun',
      [keys.run(tenant, runId), keys.session(tenant, sessionId ?? ''), keys.sessionsByActivity(tenant)],
      [update.status, update.error ?? '', nowIso(() => now), (update.from ?? []).join(','), runId, sessionId ?? '', now],
    );
    return toRun(flatToObject(reply))!;
  }
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
  return run;
}
