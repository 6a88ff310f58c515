import { metadataListOf } from '../../domain/metadata-pairs.js';
import { AppError, conflict, notFound } from '../../domain/errors.js';
import { mergeMetadata, newMetadata } from '../../domain/session-metadata.js';
import { sortSpans } from '../../domain/spans.js';
import { nowIso } from '../../domain/time.js';
import { ACTIVE_RUN_STATUSES, type Checkpoint, type JsonObject, type Session, type Span } from '../../domain/types.js';
import type { BytePage, CheckpointMeta, CheckpointPage, CheckpointWrite, NewSession, Page, SessionListOptions, SessionStore } from '../../ports/store.js';
import { clone, frozen, newRecord, sessionCopy, type MemoryTables } from './tables.js';

/** Sessions, checkpoints and spans in memory. */
export class MemorySessionStore implements SessionStore {
  constructor(
    private readonly t: MemoryTables,
    private readonly onRemoved: (tenant: string, sessionId: string, runIds: readonly string[]) => void,
  ) {}

  async getSession(tenant: string, sessionId: string): Promise<Session | null> {
    const record = this.t.data(tenant).sessions.get(sessionId);
    return record ? sessionCopy(record.session) : null;
  }

  async listSessions(tenant: string, options: SessionListOptions): Promise<Session[]> {
    const data = this.t.data(tenant);
    const list = metadataListOf(options);
    if (list === null) return [];
    const index = list !== undefined ? data.byMetadata.get(list) : options.agent_id ? data.byAgent.get(options.agent_id) : data.byCreated;
    return (index?.newestFirst(options.offset, options.limit) ?? []).map((id) => sessionCopy(data.sessions.get(id)!.session));
  }

  async createSession(tenant: string, newSession: NewSession): Promise<Session> {
    const metadata = frozen(newMetadata(newSession.metadata));
    if (this.t.data(tenant).sessions.has(newSession.session_id)) throw conflict('The session already exists.');
    const nowMs = this.t.clock();
    const now = nowIso(() => nowMs);
    const session: Session = { id: newSession.session_id, agent_id: '', tenant_id: tenant, created_at: now, updated_at: now, metadata };
    return sessionCopy(this.t.addSession(tenant, newRecord(session, nowMs)).session);
  }

  async updateSessionMetadata(tenant: string, sessionId: string, patch: JsonObject): Promise<Session> {
    const record = this.t.data(tenant).sessions.get(sessionId);
    if (!record) throw notFound('The session');
    const before = record.session.metadata;
    record.session.metadata = frozen(mergeMetadata(before, patch));
    this.t.indexMetadata(tenant, record.session, before, record.session.metadata);
    const nowMs = this.t.clock();
    record.session.updated_at = nowIso(() => nowMs);
    record.touchedMs = nowMs;
    return sessionCopy(record.session);
  }

  async appendCheckpoint(tenant: string, sessionId: string, write: CheckpointWrite): Promise<CheckpointMeta & { state?: JsonObject }> {
    const record = this.t.data(tenant).sessions.get(sessionId);
    if (!record) throw notFound('A checkpoint of this session');
    const latest = record.checkpoints.at(-1);
    const node = write.node_id ?? latest?.node_id;
    if (node === undefined) throw notFound('A checkpoint of this session');
    const seq = latest?.seq_num ?? 0;
    if (write.ifSeq !== undefined && write.ifSeq !== seq) {
      throw new AppError('precondition_failed', 'The latest checkpoint has another seq_num than If-Match names.');
    }
    const current = record.currentRunId ? this.t.data(tenant).runs.get(record.currentRunId) : undefined;
    if (write.rejectWhileRunning && current?.status === 'running') {
      throw conflict('A run of this session is running; patch it once the run is paused or finished.');
    }
    if (write.runId !== undefined && (current?.id !== write.runId || current.status !== 'running')) {
      throw conflict('The run is no longer running.');
    }
    const { state, ...meta } = this.t.append(record, node, write.patch);
    return write.withState ? { ...meta, state } : meta;
  }

  async getCheckpoint(tenant: string, sessionId: string, seq?: number): Promise<Checkpoint | null> {
    const checkpoints = this.t.data(tenant).sessions.get(sessionId)?.checkpoints ?? [];
    const found = seq === undefined ? checkpoints.at(-1) : checkpoints.find((c) => c.seq_num === seq);
    // The state is frozen when stored: handed out as it is, never copied.
    return found ? { ...found } : null;
  }

  async listCheckpoints(tenant: string, sessionId: string, page: BytePage): Promise<CheckpointPage> {
    const all = this.t.data(tenant).sessions.get(sessionId)?.checkpoints ?? [];
    const checkpoints: Checkpoint[] = [];
    let bytes = 0;
    let index = all.length - 1 - page.offset;
    for (; index >= 0 && checkpoints.length < page.limit; index -= 1) {
      const size = Buffer.byteLength(JSON.stringify(all[index]));
      if (checkpoints.length > 0 && bytes + size > page.maxBytes) break;
      bytes += size;
      checkpoints.push({ ...all[index]! });
      if (bytes >= page.maxBytes) {
        index -= 1;
        break;
      }
    }
    return { checkpoints, more: index >= 0 };
  }

  async addSpan(tenant: string, sessionId: string, span: Span): Promise<void> {
    const spans = this.t.data(tenant).sessions.get(sessionId)?.spans;
    if (!spans) return;
    spans.push(clone(span));
    if (spans.length > this.t.limits.spansRetain) spans.splice(0, spans.length - this.t.limits.spansRetain);
  }

  async listSpans(tenant: string, sessionId: string, page: Page): Promise<Span[]> {
    const spans = this.t.data(tenant).sessions.get(sessionId)?.spans ?? [];
    return sortSpans(clone(spans.slice(page.offset, page.offset + page.limit)));
  }

  async deleteSession(tenant: string, sessionId: string): Promise<void> {
    const data = this.t.data(tenant);
    const record = data.sessions.get(sessionId);
    if (!record) throw notFound('The session');
    const current = record.currentRunId ? data.runs.get(record.currentRunId) : undefined;
    if (current && ACTIVE_RUN_STATUSES.includes(current.status)) {
      throw conflict('The session has a queued, running or interrupted run; cancel it or let it finish first.');
    }
    this.t.remove(tenant, record);
    this.onRemoved(tenant, sessionId, record.runIds);
  }

  async expireSessions(cutoffMs: number, limit: number): Promise<number> {
    let removed = 0;
    for (const [tenant, data] of this.t.tenants) {
      for (const record of [...data.sessions.values()]) {
        if (removed >= limit) return removed;
        if (record.touchedMs > cutoffMs) continue;
        const status = record.currentRunId ? data.runs.get(record.currentRunId)?.status : undefined;
        if (status === 'queued' || status === 'running' || record.behind.length > 0) continue;
        this.t.remove(tenant, record);
        this.onRemoved(tenant, record.session.id, record.runIds);
        removed += 1;
      }
    }
    return removed;
  }
}
