/**
 * Every Redis key agentplane uses, built in this one module. Per-tenant keys carry the tenant
 * in a hash tag (`prefix:{tenant}:…`) so one tenant's keys share a Cluster slot and each Lua
 * script touches a single slot.
 */
export class RedisKeys {
  constructor(readonly prefix: string) {}

  private t(tenant: string): string {
    return `${this.prefix}:{${tenant}}`;
  }

  /** Hash: agent_id, created_at, updated_at, seq, run_id, run_status. */
  session(tenant: string, sessionId: string): string {
    return `${this.t(tenant)}:session:${sessionId}`;
  }
  /** Sorted set of session ids scored by created_at (ms). */
  sessions(tenant: string): string {
    return `${this.t(tenant)}:sessions`;
  }
  sessionsByAgent(tenant: string, agentId: string): string {
    return `${this.t(tenant)}:sessions:agent:${agentId}`;
  }
  /** Hash of the latest state: key → raw JSON of its value. */
  state(tenant: string, sessionId: string): string {
    return `${this.t(tenant)}:state:${sessionId}`;
  }
  /** List of checkpoint JSON documents, oldest first (index = seq_num - 1). */
  checkpoints(tenant: string, sessionId: string): string {
    return `${this.t(tenant)}:checkpoints:${sessionId}`;
  }
  /** List of span JSON documents. */
  spans(tenant: string, sessionId: string): string {
    return `${this.t(tenant)}:spans:${sessionId}`;
  }
  /** Hash of one run. */
  run(tenant: string, runId: string): string {
    return `${this.t(tenant)}:run:${runId}`;
  }
  /** Sorted set of a session's run ids scored by created_at (ms). */
  runs(tenant: string, sessionId: string): string {
    return `${this.t(tenant)}:runs:${sessionId}`;
  }
  /** Hash of one approval. */
  approval(tenant: string, approvalId: string): string {
    return `${this.t(tenant)}:approval:${approvalId}`;
  }
  /** Sorted set of pending approval ids scored by requested_at (ms). */
  pendingApprovals(tenant: string): string {
    return `${this.t(tenant)}:approvals:pending`;
  }
  /** Global counter of pending approvals across tenants (the gauge). */
  pendingApprovalCount(): string {
    return `${this.prefix}:approvals:pending-count`;
  }
  /** Capped stream of the tenant's events. */
  events(tenant: string): string {
    return `${this.t(tenant)}:events`;
  }
  /** Pub/sub channel announcing new events of every tenant. */
  eventsChannel(): string {
    return `${this.prefix}:events`;
  }
}
