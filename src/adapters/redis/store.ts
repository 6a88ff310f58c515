import type { Redis } from 'ioredis';
import { AppError, conflict, notFound } from '../../domain/errors.js';
import { newId, nowIso } from '../../domain/time.js';
import { sortSpans } from '../../domain/spans.js';
import type { Approval, Checkpoint, Run, RunStatus, Session, Span } from '../../domain/types.js';
import type {
  ApprovalDecision,
  CheckpointWrite,
  NewApproval,
  NewRun,
  Page,
  RunUpdate,
  SessionListOptions,
  Store,
} from '../../ports/store.js';
import { flatToObject, objectToPairs } from './hash.js';
import { RedisKeys } from './keys.js';
import { RedisScheduleStore } from './schedule-store.js';
import { loadScripts, type ScriptName } from './scripts.js';

export interface RedisStoreOptions {
  /** Prefix of every key. @defaultValue agentplane */
  keyPrefix?: string;
}

/**
 * The Store port on Redis: hashes and sorted sets per tenant, Lua for every write that must
 * not interleave (checkpoint append and merge, run creation, approval decisions).
 */
export class RedisStore extends RedisScheduleStore implements Store {
  private readonly keys: RedisKeys;
  private readonly script: (name: ScriptName, keys: string[], args: (string | number)[]) => Promise<unknown[]>;

  constructor(
    private readonly redis: Redis,
    options: RedisStoreOptions = {},
  ) {
    super(redis, options.keyPrefix ?? 'agentplane');
    this.keys = new RedisKeys(options.keyPrefix ?? 'agentplane');
    this.script = loadScripts(redis);
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    // The client belongs to the caller (src/main), which quits it.
  }

  async getSession(tenant: string, sessionId: string): Promise<Session | null> {
    const hash = await this.redis.hgetall(this.keys.session(tenant, sessionId));
    return toSession(tenant, sessionId, hash);
  }

  async listSessions(tenant: string, options: SessionListOptions): Promise<Session[]> {
    const index = options.agent_id ? this.keys.sessionsByAgent(tenant, options.agent_id) : this.keys.sessions(tenant);
    const reply: unknown = await this.script(
      'listSessions',
      [index],
      [this.keys.session(tenant, ''), options.offset, options.offset + options.limit - 1, tenant],
    );
    return JSON.parse(String(reply)) as Session[];
  }

  async appendCheckpoint(tenant: string, sessionId: string, write: CheckpointWrite): Promise<Checkpoint> {
    const reply = await this.script(
      'appendCheckpoint',
      [this.keys.session(tenant, sessionId), this.keys.state(tenant, sessionId), this.keys.checkpoints(tenant, sessionId)],
      [
        sessionId,
        newId(),
        write.node_id ?? '',
        nowIso(),
        write.replace ? '1' : '0',
        write.ifSeq === undefined ? '' : String(write.ifSeq),
        write.rejectWhileRunning ? '1' : '0',
        ...statePairs(write.patch),
      ],
    );
    switch (Number(reply[0])) {
      case 1:
        return JSON.parse(String(reply[1])) as Checkpoint;
      case -3:
        throw new AppError('precondition_failed', 'The latest checkpoint has another seq_num than If-Match names.');
      case -4:
        throw conflict('A run of this session is running; patch it once the run is paused or finished.');
      default:
        throw notFound('A checkpoint of this session');
    }
  }

  async getCheckpoint(tenant: string, sessionId: string): Promise<Checkpoint | null> {
    const doc = await this.redis.lindex(this.keys.checkpoints(tenant, sessionId), -1);
    return doc === null ? null : (JSON.parse(doc) as Checkpoint);
  }

  async listCheckpoints(tenant: string, sessionId: string, page: Page): Promise<Checkpoint[]> {
    const docs = await this.redis.lrange(
      this.keys.checkpoints(tenant, sessionId),
      -(page.offset + page.limit),
      -(page.offset + 1),
    );
    return docs.reverse().map((doc) => JSON.parse(doc) as Checkpoint);
  }

  async addSpan(tenant: string, sessionId: string, span: Span): Promise<void> {
    await this.redis.rpush(this.keys.spans(tenant, sessionId), JSON.stringify(span));
  }

  async listSpans(tenant: string, sessionId: string): Promise<Span[]> {
    const docs = await this.redis.lrange(this.keys.spans(tenant, sessionId), 0, -1);
    return sortSpans(docs.map((doc) => JSON.parse(doc) as Span));
  }

  async createRun(tenant: string, run: NewRun): Promise<Run> {
    const now = Date.now();
    const reply = await this.script(
      'createRun',
      [
        this.keys.session(tenant, run.session_id),
        this.keys.sessions(tenant),
        this.keys.sessionsByAgent(tenant, run.agent_id),
        this.keys.run(tenant, run.run_id),
        this.keys.runs(tenant, run.session_id),
        this.keys.state(tenant, run.session_id),
        this.keys.checkpoints(tenant, run.session_id),
      ],
      [
        run.session_id,
        run.agent_id,
        run.run_id,
        nowIso(() => now),
        now,
        run.start?.node_id ?? '',
        newId(),
        ...statePairs(run.start?.input ?? {}),
      ],
    );
    if (Number(reply[0]) === -1) throw conflict('This session already has a queued, running or interrupted run.');
    if (Number(reply[0]) === -2) throw conflict(`This session belongs to agent "${String(reply[1])}".`);
    const created = await this.getRun(tenant, run.run_id);
    if (!created) throw new AppError('internal', 'A created run could not be read back.');
    return created;
  }

  requeueRun(tenant: string, runId: string): Promise<Run> {
    return this.updateRun(tenant, runId, { status: 'queued', from: ['interrupted'] });
  }

  async getRun(tenant: string, runId: string): Promise<Run | null> {
    return toRun(await this.redis.hgetall(this.keys.run(tenant, runId)));
  }

  async listRuns(tenant: string, sessionId: string): Promise<Run[]> {
    const ids = await this.redis.zrevrange(this.keys.runs(tenant, sessionId), 0, -1);
    const runs = await Promise.all(ids.map((id) => this.getRun(tenant, id)));
    return runs.filter((run): run is Run => run !== null);
  }

  async latestRun(tenant: string, sessionId: string): Promise<Run | null> {
    const runId = await this.redis.hget(this.keys.session(tenant, sessionId), 'run_id');
    return runId ? this.getRun(tenant, runId) : null;
  }

  updateRun(tenant: string, runId: string, update: RunUpdate): Promise<Run> {
    return this.setRunStatus(tenant, runId, update, update.from ?? []);
  }

  private async setRunStatus(tenant: string, runId: string, update: RunUpdate, from: readonly RunStatus[]): Promise<Run> {
    const run = await this.redis.hget(this.keys.run(tenant, runId), 'session_id');
    if (run === null) throw notFound('The run');
    const reply = await this.script(
      'updateRun',
      [this.keys.run(tenant, runId), this.keys.session(tenant, run)],
      [update.status, update.error ?? '', nowIso(), from.join(',')],
    );
    if (Number(reply[0]) === -1) throw notFound('The run');
    if (Number(reply[0]) === -2) throw conflict(`The run is ${String(reply[1])}.`);
    return toRun(flatToObject(reply))!;
  }

  async createApproval(tenant: string, approval: NewApproval): Promise<Approval> {
    const reply = await this.script(
      'createApproval',
      this.approvalKeys(tenant, approval.id, approval.run_id, approval.session_id),
      [Date.parse(approval.requested_at), nowIso(), ...objectToPairs({ ...approval, status: 'pending' })],
    );
    // The gauge's counter is global, outside the tenant's slot, so it is kept outside the script.
    if (Number(reply[0]) === 1) await this.redis.incr(this.keys.pendingApprovalCount());
    return toApproval(flatToObject(reply[1] as unknown[]))!;
  }

  async getApproval(tenant: string, id: string): Promise<Approval | null> {
    return toApproval(await this.redis.hgetall(this.keys.approval(tenant, id)));
  }

  async listPendingApprovals(tenant: string): Promise<Approval[]> {
    const ids = await this.redis.zrange(this.keys.pendingApprovals(tenant), '0', '-1');
    const approvals = await Promise.all(ids.map((id) => this.getApproval(tenant, id)));
    return approvals.filter((a): a is Approval => a !== null && a.status === 'pending');
  }

  async decideApproval(tenant: string, id: string, decision: ApprovalDecision): Promise<Approval> {
    const target = await this.redis.hmget(this.keys.approval(tenant, id), 'run_id', 'session_id');
    const reply = await this.script(
      'decideApproval',
      this.approvalKeys(tenant, id, target[0] ?? '', target[1] ?? ''),
      [decision.approved ? 'approved' : 'rejected', decision.comment ?? '', decision.decided_by, nowIso()],
    );
    if (Number(reply[0]) === -1) throw notFound('The approval request');
    if (Number(reply[0]) === -2) throw conflict('The approval request was already decided.');
    if (Number(reply[1]) === 1) await this.redis.decr(this.keys.pendingApprovalCount());
    return toApproval(flatToObject(reply[2] as unknown[]))!;
  }

  private approvalKeys(tenant: string, id: string, runId: string, sessionId: string): string[] {
    return [
      this.keys.approval(tenant, id),
      this.keys.pendingApprovals(tenant),
      this.keys.run(tenant, runId),
      this.keys.session(tenant, sessionId),
    ];
  }

  async countPendingApprovals(): Promise<number> {
    return Math.max(0, Number((await this.redis.get(this.keys.pendingApprovalCount())) ?? 0));
  }
}

/** State patch as HSET pairs of key and raw JSON; undefined values are absent keys. */
function statePairs(patch: Record<string, unknown>): string[] {
  const pairs: string[] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (value !== undefined) pairs.push(key, JSON.stringify(value));
  }
  return pairs;
}

function toSession(tenant: string, id: string, hash: Record<string, string>): Session | null {
  if (!hash.agent_id) return null;
  return {
    id,
    agent_id: hash.agent_id,
    tenant_id: tenant,
    created_at: hash.created_at ?? '',
    updated_at: hash.updated_at ?? hash.created_at ?? '',
  };
}

function toRun(hash: Record<string, string>): Run | null {
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
  return approval;
}
