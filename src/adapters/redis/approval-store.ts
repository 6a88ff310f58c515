import { approvalJson } from '../../domain/approval-json.js';
import { AppError } from '../../domain/errors.js';
import { nowIso } from '../../domain/time.js';
import type { Approval } from '../../domain/types.js';
import type { ApprovalDecision, ApprovalStore, DecidedApproval, NewApproval, Page } from '../../ports/store.js';
import type { RedisContext } from './context.js';
import type { DurableWrites } from './durable.js';
import { flatToObject, objectToPairs } from './hash.js';
import { SCRIPT_ARGS } from './script-args.js';
import { timerMember } from './timer-store.js';

/**
 * Approvals on Redis: a hash per request and the tenant's pending and decided sets; creating and deciding
 * are Lua scripts that change the run's status in the same step. The gauge's counter is
 * global, outside the tenant's slot, so it is kept beside the scripts.
 */
export class RedisApprovalStore implements ApprovalStore {
  constructor(
    private readonly c: RedisContext,
    /** The time requests are decided at. */
    private readonly clock: () => number,
    /** WAIT for replicas before a decision is acknowledged (REDIS_WAIT_REPLICAS). */
    private readonly durable?: DurableWrites,
  ) {}

  async createApproval(tenant: string, approval: NewApproval): Promise<Approval> {
    const { keys } = this.c;
    const payload = approval.payload === undefined ? undefined : approvalJson('payload', approval.payload);
    // The expiry timer first: a timer whose approval was never stored does nothing.
    if (approval.expires_at) await this.c.redis.zadd(keys.timers(), Date.parse(approval.expires_at), timerMember('approval', tenant, approval.id));
    const reply = await this.c.script(
      'createApproval',
      [
        ...this.keysOf(tenant, approval.id, approval.run_id, approval.session_id),
        keys.sessionApprovals(tenant, approval.session_id),
        keys.activeRuns(tenant),
      ],
      [
        Date.parse(approval.requested_at),
        nowIso(this.clock),
        approval.run_id,
        this.clock(),
        keys.runIndexPrefix(tenant),
        ...objectToPairs({ ...approval, payload, status: 'pending' }),
      ],
    );
    if (Number(reply[0]) === 1) this.countPending(1);
    return toApproval(flatToObject(reply[1] as unknown[]))!;
  }

  async getApproval(tenant: string, id: string): Promise<Approval | null> {
    return toApproval(await this.c.redis.hgetall(this.c.keys.approval(tenant, id)));
  }

  async listPendingApprovals(tenant: string, page: Page): Promise<Approval[]> {
    const ids = await this.c.redis.zrange(this.c.keys.pendingApprovals(tenant), String(page.offset), String(page.offset + page.limit - 1));
    const approvals = await Promise.all(ids.map((id) => this.getApproval(tenant, id)));
    return approvals.filter((a): a is Approval => a !== null && a.status === 'pending');
  }

  async listDecidedApprovals(tenant: string, page: Page): Promise<Approval[]> {
    const ids = await this.c.redis.zrevrange(this.c.keys.decidedApprovals(tenant), page.offset, page.offset + page.limit - 1);
    const approvals = await Promise.all(ids.map((id) => this.getApproval(tenant, id)));
    return approvals.filter((a): a is Approval => a !== null && a.status !== 'pending');
  }

  async decideApproval(tenant: string, id: string, decision: ApprovalDecision): Promise<DecidedApproval> {
    const { keys } = this.c;
    const resume = decision.resume === undefined ? '' : approvalJson('resume', decision.resume);
    const [runId = '', sessionId = ''] = await this.c.redis.hmget(keys.approval(tenant, id), 'run_id', 'session_id');
    const now = this.clock();
    const replicated = this.durable?.track();
    const reply = await this.c.script(
      'decideApproval',
      [...this.keysOf(tenant, id, runId ?? '', sessionId ?? ''), keys.activeRuns(tenant), keys.decidedApprovals(tenant)],
      SCRIPT_ARGS.decideApproval.encode({
        status: decision.approved ? 'approved' : 'rejected',
        comment: decision.comment ?? '',
        decidedBy: decision.decided_by,
        decidedAt: nowIso(() => now),
        runId: runId ?? '',
        nowMs: now,
        runIndexPrefix: keys.runIndexPrefix(tenant),
        waited: decision.waited === true,
        resume,
      }),
    );
    if (Number(reply[1]) === 1) this.countPending(-1);
    const approval = toApproval(flatToObject(reply[2] as unknown[]))!;
    try {
      await replicated?.([keys.approval(tenant, id), ...(Number(reply[1]) === 1 ? [keys.pendingApprovalCount()] : [])]);
    } catch (error) {
      // Written, not confirmed: the caller enqueues the resume first, then answers 503.
      if (error instanceof AppError) return { ...approval, unconfirmed: error };
      throw error;
    }
    return approval;
  }

  async countPendingApprovals(): Promise<number> {
    return Math.max(0, Number((await this.c.redis.get(this.c.keys.pendingApprovalCount())) ?? 0));
  }

  /**
   * Moves the count of pending approvals of every tenant (a gauge: /metrics), outside the
   * request's slot (a global key). Not waited for: it leaves with whatever the caller sends next
   * in this turn of the event loop; when Redis cannot take it, the gauge is off by one (as after
   * a crash between the script and it), never the approval.
   */
  private countPending(by: 1 | -1): void {
    this.c.redis.incrby(this.c.keys.pendingApprovalCount(), by).catch(() => undefined);
  }

  private keysOf(tenant: string, id: string, runId: string, sessionId: string): string[] {
    const { keys } = this.c;
    return [keys.approval(tenant, id), keys.pendingApprovals(tenant), keys.run(tenant, runId), keys.session(tenant, sessionId)];
  }
}

function toApproval(hash: Record<string, string>): Approval | null {
  if (!hash.id) return null;
  const approval: Approval = {
    id: hash.id,
    session_id: hash.session_id ?? '',
    node_id: hash.node_id ?? '',
    prompt: hash.prompt ?? '',
    requested_at: hash.requested_at ?? '',
    run_id: hash.run_id ?? '',
    agent_id: hash.agent_id ?? '',
    status: hash.status as Approval['status'],
  };
  if (hash.decided_at) {
    approval.comment = hash.comment ?? '';
    approval.decided_by = hash.decided_by ?? '';
    approval.decided_at = hash.decided_at;
  }
  if (hash.expires_at) {
    approval.expires_at = hash.expires_at;
    approval.on_timeout = hash.on_timeout as Approval['on_timeout'];
  }
  // JSON text, written by approvalJson only.
  if (hash.payload !== undefined) approval.payload = JSON.parse(hash.payload) as unknown;
  if (hash.resume !== undefined) approval.resume = JSON.parse(hash.resume) as unknown;
  return approval;
}
