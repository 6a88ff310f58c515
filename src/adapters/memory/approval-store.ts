import { conflict, notFound } from '../../domain/errors.js';
import { approvalJson } from '../../domain/approval-json.js';
import { ACTIVE_RUN_STATUSES, type Approval } from '../../domain/types.js';
import type { ApprovalDecision, ApprovalStore, NewApproval, Page } from '../../ports/store.js';
import { timerKey, type MemoryTables } from './tables.js';

/** Approval requests in memory; deciding changes the run's status in the same step. */
export class MemoryApprovalStore implements ApprovalStore {
  constructor(private readonly t: MemoryTables) {}

  async createApproval(tenant: string, approval: NewApproval): Promise<Approval> {
    const { payload, ...request } = approval;
    const json = payload === undefined ? undefined : approvalJson('payload', payload);
    const data = this.t.data(tenant);
    const existing = data.approvals.get(approval.id);
    if (existing?.status === 'pending') {
      // Asked again while still pending (a run resumed while other requests of its pause remain
      // unanswered): a running run pauses on it again.
      const run = data.runs.get(approval.run_id);
      if (run && (run.status === 'running' || run.status === 'queued')) {
        run.approval_id = approval.id;
        this.t.markRun(tenant, run, 'interrupted');
      }
    } else if (!existing) {
      const run = data.runs.get(approval.run_id);
      if (run && !ACTIVE_RUN_STATUSES.includes(run.status)) throw conflict(`The run is ${run.status}.`);
      // Kept as JSON gives it back (as on Redis), a copy the caller cannot change.
      data.approvals.set(approval.id, { ...request, status: 'pending', ...(json === undefined ? {} : { payload: JSON.parse(json) as unknown }) });
      data.pending.add(approval.requested_at, approval.id);
      data.sessions.get(approval.session_id)?.approvalIds.add(approval.id);
      if (approval.expires_at) this.t.setTimer({ kind: 'approval', tenant, id: approval.id, dueMs: Date.parse(approval.expires_at) });
      if (run) {
        run.approval_id = approval.id;
        this.t.markRun(tenant, run, 'interrupted');
      }
    }
    return structuredClone(data.approvals.get(approval.id)!);
  }

  async getApproval(tenant: string, id: string): Promise<Approval | null> {
    const approval = this.t.data(tenant).approvals.get(id);
    return approval ? structuredClone(approval) : null;
  }

  async listPendingApprovals(tenant: string, page: Page): Promise<Approval[]> {
    const data = this.t.data(tenant);
    return data.pending.oldestFirst(page.offset, page.limit).map((id) => structuredClone(data.approvals.get(id)!));
  }

  async listDecidedApprovals(tenant: string, page: Page): Promise<Approval[]> {
    const data = this.t.data(tenant);
    return data.decided.newestFirst(page.offset, page.limit).map((id) => structuredClone(data.approvals.get(id)!));
  }

  async decideApproval(tenant: string, id: string, decision: ApprovalDecision): Promise<Approval> {
    const resume = decision.resume === undefined ? undefined : approvalJson('resume', decision.resume);
    const data = this.t.data(tenant);
    const approval = data.approvals.get(id);
    if (!approval) throw notFound('The approval request');
    if (approval.status !== 'pending') throw conflict('The approval request was already decided.');
    approval.status = decision.approved ? 'approved' : 'rejected';
    approval.comment = decision.comment ?? '';
    if (resume !== undefined) approval.resume = JSON.parse(resume) as unknown;
    approval.decided_by = decision.decided_by;
    approval.decided_at = this.t.now();
    data.pending.delete(approval.requested_at, id);
    data.decided.add(approval.decided_at, id);
    this.t.timers.delete(timerKey('approval', tenant, id));
    const run = data.runs.get(approval.run_id);
    if (run?.status === 'interrupted') this.t.markRun(tenant, run, 'queued');
    return structuredClone(approval);
  }

  async countPendingApprovals(): Promise<number> {
    let count = 0;
    for (const data of this.t.tenants.values()) count += data.pending.size;
    return count;
  }
}
