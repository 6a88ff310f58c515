import { AppError } from '../../domain/errors.js';
import { sortSpans } from '../../domain/spans.js';
import { newId, nowIso } from '../../domain/time.js';
import type { Checkpoint, Session, Span } from '../../domain/types.js';
import type {
  BytePage,
  CheckpointMeta,
  CheckpointPage,
  CheckpointWrite,
  NewSession,
  Page,
  SessionLatest,
  SessionListOptions,
  SessionStore,
  StorageLimits,
  ThreadRow,
} from '../../ports/store.js';
import type { RedisContext } from './context.js';
import type { DurableWrites } from './durable.js';
import { statePairs } from './hash.js';
import { SCRIPT_ARGS, type StateLimitArgs } from './script-args.js';
import { toRun } from './run-store.js';
import { RedisSessionRecords, toSession } from './session-records.js';
import { listThreadRows } from './thread-rows.js';
import { metadataListOf } from '../../domain/metadata-pairs.js';
import { SessionsMetadataIndex } from './metadata-index.js';
import type { JsonObject } from '../../domain/types.js';

/** A history entry: a checkpoint's metadata and how to undo it (the values its patch replaced). */
interface HistoryEntry extends CheckpointMeta {
  /** Keys the patch added (absent before it). */
  unset: string[];
  /** Keys the patch overwrote, with their values before it. */
  restore: Record<string, unknown>;
}

/** Fields per HSCAN call on a large state: each call holds Redis for about this much work. */
const SCAN_COUNT = 1_000;
/** Rounds of re-reading the history window when checkpoints were appended meanwhile. */
const WINDOW_ATTEMPTS = 3;

/**
 * Sessions, checkpoints and spans on Redis. The latest state is a hash (key → raw JSON); each
 * checkpoint is a history entry holding only what undoes it, so a patch costs O(patch) in
 * Redis time and memory. Older states are rebuilt from the latest one by undoing entries, newest
 * first; a large state is scanned in chunks (HSCAN), and undoing every entry newer than the
 * wanted checkpoint makes such a scan exact even when patches land during it.
 */
export class RedisSessionStore implements SessionStore {
  private readonly records: RedisSessionRecords;
  private readonly metadataIndex: SessionsMetadataIndex;

  constructor(
    private readonly c: RedisContext,
    private readonly limits: StorageLimits,
    private readonly clock: () => number,
    /** WAIT for replicas before a checkpoint patch or a session write is acknowledged (REDIS_WAIT_REPLICAS). */
    private readonly durable?: DurableWrites,
  ) {
    this.records = new RedisSessionRecords(c, clock, durable);
    this.metadataIndex = new SessionsMetadataIndex(c);
  }

  async getSession(tenant: string, sessionId: string): Promise<Session | null> {
    const hash = await this.c.redis.hgetall(this.c.keys.session(tenant, sessionId));
    return toSession(tenant, sessionId, hash);
  }

  async listSessions(tenant: string, options: SessionListOptions): Promise<Session[]> {
    const { keys } = this.c;
    const list = metadataListOf(options);
    if (list === null) return [];
    if (list !== undefined) await this.metadataIndex.ready(tenant);
    const index = list !== undefined ? keys.sessionsByMetadata(tenant, list) : options.agent_id ? keys.sessionsByAgent(tenant, options.agent_id) : keys.sessions(tenant);
    const reply = await this.c.script<string>(
      'listSessions',
      [index],
      [keys.session(tenant, ''), options.offset, options.offset + options.limit - 1, tenant],
    );
    return JSON.parse(String(reply)) as Session[];
  }

  async createSession(tenant: string, session: NewSession): Promise<Session> {
    return this.records.create(tenant, session);
  }

  async updateSessionMetadata(tenant: string, sessionId: string, patch: JsonObject): Promise<Session> {
    return this.records.updateMetadata(tenant, sessionId, patch);
  }

  async appendCheckpoint(tenant: string, sessionId: string, write: CheckpointWrite): Promise<CheckpointMeta & { state?: JsonObject }> {
    const { keys } = this.c;
    const now = this.clock();
    const replicated = this.durable?.track();
    const reply = await this.c.script(
      'appendCheckpoint',
      [keys.session(tenant, sessionId), keys.state(tenant, sessionId), keys.checkpoints(tenant, sessionId), keys.sessionsByActivity(tenant)],
      SCRIPT_ARGS.appendCheckpoint.encode(
        {
          sessionId,
          checkpointId: newId(),
          nodeId: write.node_id ?? '',
          now: nowIso(() => now),
          nowMs: now,
          ifSeq: write.ifSeq === undefined ? '' : String(write.ifSeq),
          rejectWhileRunning: write.rejectWhileRunning === true,
          ...this.stateLimits(),
          withState: write.withState === true,
          runId: write.runId ?? '',
        },
        statePairs(write.patch),
      ),
    );
    await replicated?.([keys.session(tenant, sessionId)]);
    const meta = metaOf(parseEntry(String(reply[1]), sessionId));
    return reply[2] === undefined ? meta : { ...meta, state: JSON.parse(String(reply[2])) as JsonObject };
  }

  /** The limits every writing script appends a checkpoint under. */
  stateLimits(): StateLimitArgs {
    const { maxStateBytes, maxStateKeys, checkpointsRetain } = this.limits;
    return { maxStateBytes, maxStateKeys, checkpointsRetain };
  }

  async getCheckpoint(tenant: string, sessionId: string, seq?: number): Promise<Checkpoint | null> {
    const latest = await this.latestState(tenant, sessionId);
    if (!latest) return null;
    const target = seq ?? latest.seq;
    if (target > latest.seq || target < 1) return null;
    if (target === latest.seq && latest.entry) return checkpointOf(latest.entry, latest.state);
    const entries = await this.window(tenant, sessionId, latest.seq - target + 1, target, latest.seq);
    if (!entries || entries[0]!.seq_num !== target) return null;
    for (let i = entries.length - 1; i > 0; i -= 1) undo(latest.state, entries[i]!);
    return checkpointOf(entries[0]!, latest.state);
  }

  /** {@link Store.latestOfSessions}: one script for every session named (a large state is scanned apart). */
  async latestOfSessions(tenant: string, sessionIds: readonly string[], maxStateBytes: number): Promise<SessionLatest[]> {
    if (sessionIds.length === 0) return [];
    const { keys } = this.c;
    const reply = await this.c.script<[(string | null)[], unknown[]][]>('readSessionsLatest', [keys.sessions(tenant)], [keys.tenantPrefix(tenant), maxStateBytes, ...sessionIds]);
    return Promise.all(
      reply.map(async ([fields, latest], i) => {
        const sessionId = sessionIds[i]!;
        const hash: Record<string, string> = {};
        RUN_FIELDS.forEach((field, at) => {
          const value = fields[at];
          if (value !== null && value !== undefined) hash[field] = String(value);
        });
        const kind = Number(latest[0]);
        if (kind === 3) return { run: toRun(hash) };
        const checkpoint =
          kind === 0
            ? null
            : kind === 1
              ? { ...metaOf(parseEntry(String(latest[1]), sessionId)), state: stateOfPairs(latest[2] as string[]) }
              : await this.getCheckpoint(tenant, sessionId);
        return { run: toRun(hash), checkpoint };
      }),
    );
  }

  /** {@link Store.listThreadRows}: one script, one string answered; a large state, or one past the budget, is read on its own. */
  listThreadRows(tenant: string, page: { offset: number; limit: number }, maxStateBytes: number): Promise<ThreadRow[]> {
    return listThreadRows(this.c, (sessionId) => this.getCheckpoint(tenant, sessionId), tenant, page, maxStateBytes);
  }

  async listCheckpoints(tenant: string, sessionId: string, page: BytePage): Promise<CheckpointPage> {
    const latest = await this.latestState(tenant, sessionId);
    if (!latest) return { checkpoints: [], more: false };
    const newest = latest.seq - page.offset;
    const oldest = Math.max(1, newest - page.limit + 1);
    if (newest < 1) return { checkpoints: [], more: false };
    // Entries from the oldest wanted one up to the latest: undoing the newer ones yields each state.
    const entries = await this.window(tenant, sessionId, latest.seq - oldest + 2, oldest - 1, latest.seq);
    if (!entries || entries.length === 0) return { checkpoints: [], more: false };
    const bySeq = new Map(entries.map((e) => [e.seq_num, e]));
    const state = latest.state;
    const checkpoints: Checkpoint[] = [];
    let bytes = 0;
    let seq = latest.seq;
    for (; seq >= oldest; seq -= 1) {
      const entry = bySeq.get(seq);
      if (!entry) break;
      if (seq <= newest) {
        const checkpoint = checkpointOf(entry, state);
        bytes += Buffer.byteLength(JSON.stringify(checkpoint));
        if (checkpoints.length > 0 && bytes > page.maxBytes) break;
        checkpoints.push(checkpoint);
        if (bytes >= page.maxBytes) {
          seq -= 1;
          break;
        }
      }
      undo(state, entry);
    }
    return { checkpoints, more: seq >= 1 && bySeq.has(seq) };
  }

  async addSpan(tenant: string, sessionId: string, span: Span): Promise<void> {
    const key = this.c.keys.spans(tenant, sessionId);
    // One command per span; the trim (rarely needed) only when the list passed its cap.
    const length = await this.c.redis.rpush(key, JSON.stringify(span));
    if (length > this.limits.spansRetain) await this.c.redis.ltrim(key, -this.limits.spansRetain, -1);
  }

  async listSpans(tenant: string, sessionId: string, page: Page): Promise<Span[]> {
    // Spans are appended as they close; a page is taken in write order, then sorted by start.
    const docs = await this.c.redis.lrange(this.c.keys.spans(tenant, sessionId), page.offset, page.offset + page.limit - 1);
    return sortSpans(docs.map((doc) => JSON.parse(doc) as Span));
  }

  async deleteSession(tenant: string, sessionId: string): Promise<void> {
    await this.remove(tenant, sessionId, '');
  }

  async expireSessions(cutoffMs: number, limit: number): Promise<number> {
    let removed = 0;
    const tenants = await this.c.redis.smembers(this.c.keys.tenants());
    for (const tenant of tenants) {
      // Sessions that cannot go stay at the front of the index: page past them (skipped), so
      // they never starve the idle sessions behind them.
      let skipped = 0;
      while (removed < limit) {
        const wanted = limit - removed;
        const ids = await this.c.redis.zrangebyscore(this.c.keys.sessionsByActivity(tenant), '-inf', cutoffMs, 'LIMIT', skipped, wanted);
        for (const id of ids) {
          try {
            // false: gone, or written to since the read; either way out of the range now.
            if (await this.remove(tenant, id, String(cutoffMs))) removed += 1;
          } catch (error) {
            // A session with an active run (or runs queued behind) is alive: looked at again later.
            if (!(error instanceof AppError && error.code === 'conflict')) throw error;
            skipped += 1;
          }
        }
        if (ids.length < wanted) break;
      }
    }
    return removed;
  }

  /** Runs the delete script; resolves false when the session was not there (or not idle). */
  private async remove(tenant: string, sessionId: string, cutoff: string): Promise<boolean> {
    const { keys } = this.c;
    const graph = keys.graphThread(tenant, sessionId);
    try {
      const reply = await this.c.script(
        'deleteSession',
        [
          keys.session(tenant, sessionId),
          keys.state(tenant, sessionId),
          keys.checkpoints(tenant, sessionId),
          keys.spans(tenant, sessionId),
          keys.runs(tenant, sessionId),
          keys.sessions(tenant),
          keys.sessionsByActivity(tenant),
          keys.pendingApprovals(tenant),
          keys.scheduleRuns(tenant),
          keys.sessionApprovals(tenant, sessionId),
          keys.activeRuns(tenant),
          keys.queuedBehind(tenant, sessionId),
          keys.decidedApprovals(tenant),
          graph.checkpoints,
          graph.records,
          graph.blobs,
          graph.blobRefs,
          graph.writeIndex,
          graph.writes,
          keys.graphThreads(tenant),
        ],
        [sessionId, keys.sessionsByAgentPrefix(tenant), keys.runPrefix(tenant), keys.approvalPrefix(tenant), cutoff, keys.runIndexPrefix(tenant)],
      );
      const pending = Number(reply[1]);
      if (pending > 0) await this.c.redis.decrby(keys.pendingApprovalCount(), pending);
      return true;
    } catch (error) {
      if (cutoff !== '' && error instanceof AppError && error.code === 'not_found') return false;
      throw error;
    }
  }

  /**
   * The latest state and its seq_num: one script for a small state (with the latest entry), a
   * chunked scan for a large one; `state` then reflects `seq` once the caller undoes every
   * entry newer than it, which {@link window} supplies.
   */
  private async latestState(
    tenant: string,
    sessionId: string,
  ): Promise<{ seq: number; state: Map<string, unknown>; entry?: HistoryEntry } | null> {
    const { keys } = this.c;
    const reply = await this.c.script(
      'readCheckpoint',
      [keys.session(tenant, sessionId), keys.state(tenant, sessionId), keys.checkpoints(tenant, sessionId)],
      [],
    );
    const kind = Number(reply[0]);
    if (kind === 0) return null;
    if (kind === 1) {
      const entry = parseEntry(String(reply[1]), sessionId);
      const state = new Map(Object.entries(JSON.parse(String(reply[2])) as JsonObject));
      return { seq: entry.seq_num, state, entry };
    }
    const seq = Number(reply[1]);
    const state = await this.scanState(tenant, sessionId);
    // Patches that landed during the scan are undone: the scan then equals the state of `seq`.
    const now = Number(await this.c.redis.hget(keys.session(tenant, sessionId), 'seq'));
    if (now > seq) {
      const newer = await this.window(tenant, sessionId, now - seq, seq + 1, now);
      if (!newer) throw new AppError('unavailable', 'The session changed too fast to read; retry.', { headers: { 'Retry-After': '1' } });
      for (let i = newer.length - 1; i >= 0; i -= 1) undo(state, newer[i]!);
    }
    return { seq, state };
  }

  private async scanState(tenant: string, sessionId: string): Promise<Map<string, unknown>> {
    const state = new Map<string, unknown>();
    let cursor = '0';
    do {
      const [next, flat] = await this.c.redis.hscan(this.c.keys.state(tenant, sessionId), cursor, 'COUNT', SCAN_COUNT);
      for (let i = 0; i + 1 < flat.length; i += 2) state.set(flat[i]!, JSON.parse(flat[i + 1]!));
      cursor = next;
    } while (cursor !== '0');
    return state;
  }

  /**
   * History entries with seq_num from `from` to `to`, oldest first, read from the list's tail
   * (`count` entries, more when checkpoints were appended meanwhile). Undefined when `from`
   * is no longer retained; entries before the oldest retained one are simply absent.
   */
  private async window(tenant: string, sessionId: string, count: number, from: number, to: number): Promise<HistoryEntry[] | undefined> {
    const key = this.c.keys.checkpoints(tenant, sessionId);
    let span = count;
    for (let attempt = 0; attempt < WINDOW_ATTEMPTS; attempt += 1) {
      const docs = await this.c.redis.lrange(key, -span, -1);
      const entries = docs.map((doc) => parseEntry(doc, sessionId));
      const newest = entries.at(-1)?.seq_num ?? 0;
      const wanted = entries.filter((e) => e.seq_num >= from && e.seq_num <= to);
      const oldestRead = entries[0]?.seq_num ?? Infinity;
      // Complete when the read reaches `from`, or the list holds nothing older.
      if (oldestRead <= Math.max(from, 1) || docs.length < span) return wanted;
      span += newest - to;
    }
    return undefined;
  }
}

/** The checkpoint (without its state) of a history entry as a script answers it. */
export function metaOfEntry(doc: string, sessionId: string): CheckpointMeta {
  return metaOf(parseEntry(doc, sessionId));
}

/** A state from its hash's field/value pairs (each value a JSON text), as HGETALL answers them. */
function stateOfPairs(flat: readonly string[]): JsonObject {
  const state: JsonObject = {};
  for (let i = 0; i < flat.length; i += 2) state[flat[i]!] = JSON.parse(flat[i + 1]!) as JsonObject[string];
  return state;
}

/** The run fields readSessionsLatest-1.lua answers, in its order (what toRun reads). */
const RUN_FIELDS = ['id', 'session_id', 'agent_id', 'status', 'created_at', 'updated_at', 'error', 'approval_id', 'deadline_at', 'seq_num'] as const;

function parseEntry(doc: string, sessionId: string): HistoryEntry {
  const entry = JSON.parse(doc) as Omit<HistoryEntry, 'session_id'>;
  return { session_id: sessionId, ...entry };
}

function metaOf(entry: HistoryEntry): CheckpointMeta {
  return {
    session_id: entry.session_id,
    checkpoint_id: entry.checkpoint_id,
    node_id: entry.node_id,
    seq_num: entry.seq_num,
    created_at: entry.created_at,
  };
}

function checkpointOf(entry: HistoryEntry, state: Map<string, unknown>): Checkpoint {
  return { ...metaOf(entry), state: Object.fromEntries(state) };
}

/** Turns the state after `entry` into the state before it. */
function undo(state: Map<string, unknown>, entry: HistoryEntry): void {
  for (const key of entry.unset) state.delete(key);
  for (const [key, value] of Object.entries(entry.restore)) state.set(key, value);
}
