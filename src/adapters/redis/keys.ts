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

  /**
   * Hash: agent_id ('' until its first run when created before it), created_at, updated_at,
   * seq, run_id, run_status, metadata_bytes and one `meta:<key as JSON>` field per metadata key.
   */
  /** What every key of the tenant starts with (`<prefix>:{tenant}:`): scripts build their keys from it. */
  tenantPrefix(tenant: string): string {
    return `${this.t(tenant)}:`;
  }

  session(tenant: string, sessionId: string): string {
    return `${this.t(tenant)}:session:${sessionId}`;
  }
  /** Sorted set of session ids scored by created_at (ms). */
  sessions(tenant: string): string {
    return `${this.t(tenant)}:sessions`;
  }
  sessionsByAgent(tenant: string, agentId: string): string {
    return `${this.sessionsByAgentPrefix(tenant)}${agentId}`;
  }
  /**
   * Sorted set of the ids of the sessions whose metadata holds a key with a scalar value, scored
   * by created_at (ms) as {@link sessions}; `pair` is the key's JSON, NUL, the value's JSON
   * (domain/metadata-pairs.ts, includes/sessionMetadata.lua).
   */
  sessionsByMetadata(tenant: string, pair: string): string {
    return `${this.sessions(tenant)}:meta:${pair}`;
  }
  /** String set once the tenant's sessions written before the metadata index are in it. */
  sessionsMetadataIndexed(tenant: string): string {
    return `${this.sessions(tenant)}:meta-indexed`;
  }
  /** Sorted set of session ids scored by their last write (ms): what expiry reads. */
  sessionsByActivity(tenant: string): string {
    return `${this.t(tenant)}:sessions:activity`;
  }
  /** Prefix of the sessions-by-agent sorted sets (the agent id follows). */
  sessionsByAgentPrefix(tenant: string): string {
    return `${this.t(tenant)}:sessions:agent:`;
  }
  /** Set of the approval ids of a session. */
  sessionApprovals(tenant: string, sessionId: string): string {
    return `${this.t(tenant)}:approvals:session:${sessionId}`;
  }
  /** Global set of tenants that have written sessions (expiry visits each). */
  tenants(): string {
    return `${this.prefix}:tenants`;
  }
  /** Hash of the latest state: key → raw JSON of its value. */
  state(tenant: string, sessionId: string): string {
    return `${this.t(tenant)}:state:${sessionId}`;
  }
  /** List of history entries (checkpoint metadata and how to undo it), oldest first, capped. */
  checkpoints(tenant: string, sessionId: string): string {
    return `${this.t(tenant)}:checkpoints:${sessionId}`;
  }
  /** List of span JSON documents. */
  spans(tenant: string, sessionId: string): string {
    return `${this.t(tenant)}:spans:${sessionId}`;
  }
  /** Prefix of run hashes (the run id follows). */
  runPrefix(tenant: string): string {
    return `${this.t(tenant)}:run:`;
  }
  /** Hash of one run. */
  run(tenant: string, runId: string): string {
    return `${this.runPrefix(tenant)}${runId}`;
  }
  /** Sorted set of a session's run ids scored by created_at (ms). */
  runs(tenant: string, sessionId: string): string {
    return `${this.t(tenant)}:runs:${sessionId}`;
  }
  /**
   * Sorted set of the tenant's queued, running and interrupted run ids, scored by their last
   * status change (ms). Not under `runs:`, where any session id may follow.
   */
  activeRuns(tenant: string): string {
    return `${this.t(tenant)}:active-runs`;
  }
  /**
   * Prefix of the tenant's run indexes (what GET /api/runs reads), sorted sets of run ids
   * scored by created_at (ms): `all`, `agent:<agent>`, and for the terminal statuses only
   * `status:<status>`, `agent-status:<status>:<agent>` (active runs are {@link activeRuns}).
   * The scripts maintain them (includes/runStatus.lua); {@link runIndex} names the one a
   * filter reads.
   */
  runIndexPrefix(tenant: string): string {
    return `${this.t(tenant)}:run-index:`;
  }
  /** The run index of the tenant's runs with this (terminal) status and/or agent (all runs without either). */
  runIndex(tenant: string, filter: { status?: string; agent_id?: string }): string {
    const prefix = this.runIndexPrefix(tenant);
    const { status, agent_id: agent } = filter;
    if (status !== undefined && agent !== undefined) return `${prefix}agent-status:${status}:${agent}`;
    if (status !== undefined) return `${prefix}status:${status}`;
    return agent !== undefined ? `${prefix}agent:${agent}` : `${prefix}all`;
  }
  /** List of the run ids queued behind a session's current run (`multitask: "enqueue"`), oldest first. */
  queuedBehind(tenant: string, sessionId: string): string {
    return `${this.t(tenant)}:queued-behind:${sessionId}`;
  }
  /**
   * Hash of one stored Idempotency-Key of a run start (fingerprint, run_id), expiring after
   * IDEMPOTENCY_TTL_MS; `scope` is the digest of the caller and the key (IdempotentStart).
   */
  idempotencyKey(tenant: string, scope: string): string {
    return `${this.t(tenant)}:idempotency:${scope}`;
  }
  /** Global sorted set of timers (run deadlines, approval expiries): `<kind>|<tenant>|<id>` scored by due ms. */
  timers(): string {
    return `${this.prefix}:timers`;
  }
  /** A lease held by one process at a time (the reaper's pass, the Telegram poller). */
  lease(name: string): string {
    return `${this.prefix}:lease:${name}`;
  }
  /** Prefix of approval hashes (the approval id follows). */
  approvalPrefix(tenant: string): string {
    return `${this.t(tenant)}:approval:`;
  }
  /** Hash of one approval. */
  approval(tenant: string, approvalId: string): string {
    return `${this.approvalPrefix(tenant)}${approvalId}`;
  }
  /** Sorted set of pending approval ids scored by requested_at (ms). */
  pendingApprovals(tenant: string): string {
    return `${this.t(tenant)}:approvals:pending`;
  }
  /** Sorted set of decided (approved, rejected, cancelled) approval ids scored by decided_at (ms). */
  decidedApprovals(tenant: string): string {
    return `${this.t(tenant)}:approvals:decided`;
  }
  /** Global counter of pending approvals across tenants (the gauge). */
  pendingApprovalCount(): string {
    return `${this.prefix}:approvals:pending-count`;
  }
  /** Capped stream of the tenant's events. */
  events(tenant: string): string {
    return `${this.t(tenant)}:events`;
  }
  /**
   * Bytes of the tenant's retained events (includes/publishEvent.lua): a hash, field `tenant`
   * the whole log's, `run:<run id>` each run's with events retained, `first:<run id>` where
   * that run's oldest event is looked for.
   */
  eventBytes(tenant: string): string {
    return `${this.t(tenant)}:events:bytes`;
  }
  /**
   * An index of the tenant's events by run that earlier versions kept (a sorted set): the
   * event scripts delete it at the tenant's next trim (includes/publishEvent.lua).
   */
  eventsByRun(tenant: string): string {
    return `${this.t(tenant)}:events:by-run`;
  }
  /** Pub/sub channel announcing new events of every tenant (one Redis, Sentinel). */
  eventsChannel(): string {
    return `${this.prefix}:events`;
  }
  /** Sharded pub/sub channel announcing the tenant's new events, in its slot (Redis Cluster). */
  eventsShardChannel(tenant: string): string {
    return `${this.t(tenant)}:events:live`;
  }
  /** Pub/sub channel of run cancellations (workers abort the run's node). */
  cancelChannel(): string {
    return `${this.prefix}:run-cancels`;
  }
  /** Hash of one schedule (input as JSON). */
  schedule(tenant: string, scheduleId: string): string {
    return `${this.t(tenant)}:schedule:${scheduleId}`;
  }
  /** Sorted set of the tenant's schedule ids scored by created_at (ms). */
  schedules(tenant: string): string {
    return `${this.t(tenant)}:schedules`;
  }
  /** Hash of a schedule's fire records: fire id → record JSON. */
  scheduleFires(tenant: string, scheduleId: string): string {
    return `${this.t(tenant)}:schedule-fires:${scheduleId}`;
  }
  /** List of a schedule's fire ids, newest first, capped. */
  scheduleHistory(tenant: string, scheduleId: string): string {
    return `${this.t(tenant)}:schedule-history:${scheduleId}`;
  }
  /** Hash: run id → `<schedule id> <fire id>` of the record the run settles. */
  scheduleRuns(tenant: string): string {
    return `${this.t(tenant)}:schedule-runs`;
  }
  /**
   * BullMQ's key prefix: the prefix itself on one server; on a Redis Cluster the prefix as a
   * hash tag (`{agentplane}`), as BullMQ requires there, so each queue's keys (and scripts) share
   * one slot. Both queues then live on one master; tenants' keys spread over all of them.
   */
  queuePrefix(cluster: boolean): string {
    return cluster ? `{${this.prefix}}` : this.prefix;
  }
  /** Global hash: schedule id → tenant, for reconciliation across tenants (not `:schedules:`, BullMQ's queue). */
  scheduleTenants(): string {
    return `${this.prefix}:schedule-tenants`;
  }
  /** Sorted set (lexical) of the tenant's threads (session ids) that have LangGraph checkpoints. */
  graphThreads(tenant: string): string {
    return `${this.t(tenant)}:lg:threads`;
  }
  /**
   * Every key of one thread's LangGraph checkpoints, in the order the scripts take them
   * (src/adapters/shared/graph-members.ts names the members and fields):
   * `checkpoints` sorted set (lexical) of `ns NUL id`; `records` hash of those members → the
   * checkpoint record; `blobs` hash of `ns NUL channel NUL version` → value; `blobRefs` hash of
   * the same fields → how many stored checkpoints hold the blob; `writeIndex` sorted set
   * (lexical) and `writes` hash of `ns NUL id NUL task NUL idx` → the write.
   * Deleting the session deletes these keys.
   */
  graphThread(tenant: string, threadId: string) {
    const t = `${this.t(tenant)}:lg`;
    return {
      checkpoints: `${t}:checkpoints:${threadId}`,
      records: `${t}:records:${threadId}`,
      blobs: `${t}:blobs:${threadId}`,
      blobRefs: `${t}:blob-refs:${threadId}`,
      writeIndex: `${t}:write-index:${threadId}`,
      writes: `${t}:writes:${threadId}`,
    };
  }
  /**
   * The tenant's LangGraph memory (BaseStore) keys: `items` hash of `namespace NUL key` → item
   * JSON; per namespace, a sorted set of its keys scored by their place (the order they were
   * put in), `itemOrder(namespace name)`, which scripts build from `itemOrderPrefix`;
   * `namespaces` sorted set (lexical) of the namespaces holding items, `namespaceCounts` hash of
   * how many each holds; `bytes` the size of every item (the per-tenant cap).
   */
  graphMemory(tenant: string) {
    const t = `${this.t(tenant)}:lg-memory`;
    return {
      items: `${t}:items`,
      itemOrderPrefix: `${t}:item-order:`,
      itemOrder: (namespace: string) => `${t}:item-order:${namespace}`,
      namespaces: `${t}:namespaces`,
      namespaceCounts: `${t}:namespace-counts`,
      bytes: `${t}:bytes`,
    };
  }
  /**
   * A tenant's stored LangGraph assistants: `assistants`, a hash of assistant id -> the assistant
   * as it reads (JSON); per assistant, a hash of version number -> that version (JSON); a hash
   * of assistant id -> its graph id (what a count by graph reads); the bytes of all that JSON.
   */
  assistants(tenant: string) {
    const t = `${this.t(tenant)}:assistants`;
    return { latest: t, versions: (assistantId: string) => `${t}:versions:${assistantId}`, graphs: `${t}:graphs`, bytes: `${t}:bytes` };
  }
}

/**
 * The keys of the run queue's admission step (lua/includes/admitRuns.lua says what each holds),
 * under BullMQ's key prefix ({@link RedisKeys.queuePrefix}): on a cluster they share the runs
 * queue's hash tag, so the admission scripts touch one slot. `pending` prefixes each tenant's
 * list of waiting job ids (the tenant name follows), and `agents` (keys[8]) the lists of the
 * jobs parked for their agent's cap (`<agents>:parked:<agent>|<tenant>`, `<agents>:ring:<agent>`);
 * `handed` is the set of the admitted job ids added to BullMQ (lua/handRuns-2.lua).
 */
export function admissionKeys(queuePrefix: string) {
  const a = `${queuePrefix}:admission`;
  return {
    keys: [`${a}:jobs`, `${a}:ring`, `${a}:credit`, `${a}:queued`, `${a}:running`, `${a}:admitted`, `${a}:delayed`, `${a}:workers`, `${a}:agents`, `${a}:held`],
    pending: `${a}:pending:`,
    handed: `${a}:handed`,
    reconcileLock: `${a}:reconcile-lock`,
  };
}
