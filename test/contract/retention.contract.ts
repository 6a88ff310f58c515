import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/domain/types.js';
import type { GraphCheckpointStore } from '../../src/ports/graph-storage.js';
import type { StorageLimits, Store } from '../../src/ports/store.js';

/** A fresh Store with these limits, stamping writes with `clock`. */
export type BoundedStoreFactory = (options: { limits: StorageLimits; clock: () => number }) => Promise<Store>;

/** A fresh Store and the LangGraph checkpoints on the same storage, as a backend pairs them. */
export interface BoundedStorage {
  store: Store;
  graphCheckpoints: GraphCheckpointStore;
  /** Redis only: how many of the thread's keys exist (keys.graphThread, its keys.graphThreads entry). */
  graphKeysLeft?: (tenant: string, threadId: string) => Promise<number>;
}

/** {@link BoundedStoreFactory} with the graph checkpoints of the store's sessions. */
export type BoundedStorageFactory = (options: { limits: StorageLimits; clock: () => number }) => Promise<BoundedStorage>;

const T = 'tenant-a';
// On the test Redis Cluster, T and OTHER land on different masters (test/cluster checks it).
const OTHER = 'tenant-c';
const ALL = { limit: 10_000, offset: 0 };
const LIMITS: StorageLimits = { maxStateBytes: 10_000, maxStateKeys: 100, checkpointsRetain: 50, runsRetain: 100, spansRetain: 1_000 };
const HOUR = 3_600_000;

/** The first approval request of a run (id `<run id>.1`), as the executor stores one. */
const approvalOf = (sessionId: string, runId: string, requestedAt: string) => ({
  id: `${runId}.1`,
  session_id: sessionId,
  run_id: runId,
  agent_id: 'echo',
  node_id: 'receive',
  prompt: 'ok?',
  requested_at: requestedAt,
});

/** Graph data of a thread: a checkpoint in two namespaces with a blob each, and a write. */
async function writeGraphThread(graph: GraphCheckpointStore, tenant: string, threadId: string): Promise<void> {
  for (const ns of ['', 'child:1']) {
    const record = { checkpointId: 'c1', checkpoint: '{}', metadata: '{}', versions: { a: '1' } };
    await graph.putCheckpoint(tenant, threadId, { ns, record, blobs: { a: `"${threadId}"` }, retain: 5, maxStateBytes: 1024 });
  }
  await graph.putWrites(tenant, threadId, '', 'c1', [{ taskId: 't1', idx: 0, channel: 'a', value: '"w"', taskPath: '' }]);
}

/**
 * Asserts a session's graph thread is gone: no checkpoint, no thread entry, no key left, and a
 * checkpoint stored again under the same id finds neither its old blob nor its old write.
 */
async function expectGraphThreadGone(storage: BoundedStorage, tenant: string, threadId: string): Promise<void> {
  const { graphCheckpoints: graph } = storage;
  expect(await graph.getCheckpoint(tenant, threadId, '')).toBeNull();
  expect((await graph.listCheckpoints(tenant, threadId, { limit: 10 })).entries).toEqual([]);
  expect(await graph.listThreads(tenant, undefined, 100)).not.toContain(threadId);
  if (storage.graphKeysLeft) expect(await storage.graphKeysLeft(tenant, threadId)).toBe(0);
  const record = { checkpointId: 'c1', checkpoint: '{}', metadata: '{}', versions: { a: '1' } };
  await graph.putCheckpoint(tenant, threadId, { ns: '', record, blobs: {}, retain: 5, maxStateBytes: 1024 });
  expect(await graph.getCheckpoint(tenant, threadId, '')).toMatchObject({ values: {}, writes: [] });
  await graph.deleteThread(tenant, threadId);
}

/** Asserts a session's graph thread is whole: both namespaces, its blob and its write. */
async function expectGraphThreadKept(storage: BoundedStorage, tenant: string, threadId: string): Promise<void> {
  const { graphCheckpoints: graph } = storage;
  expect(await graph.getCheckpoint(tenant, threadId, '')).toMatchObject({ values: { a: `"${threadId}"` }, writes: [{ taskId: 't1', idx: 0, value: '"w"' }] });
  expect((await graph.listCheckpoints(tenant, threadId, { limit: 10 })).entries).toHaveLength(2);
  expect(await graph.listThreads(tenant, undefined, 100)).toContain(threadId);
  if (storage.graphKeysLeft) expect(await storage.graphKeysLeft(tenant, threadId)).toBeGreaterThan(0);
}

/** A clock the test moves. */
export function manualClock(start = Date.parse('2026-11-01T00:00:00.000Z')) {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

/**
 * Bounded storage, run against both adapters: state limits, history retention and its
 * reconstruction, byte-bounded pages, deleting a session and expiring idle ones on a clock
 * the test controls, and paged lists.
 */
export function retentionContract(name: string, make: BoundedStorageFactory): void {
  describe(`Bounded storage contract: ${name}`, () => {
    const setUp = async (limits: Partial<StorageLimits> = {}) => {
      const clock = manualClock();
      const storage = await make({ limits: { ...LIMITS, ...limits }, clock: clock.now });
      const { store } = storage;
      const session = async (input: JsonObject = { a: 1 }, tenant = T) => {
        const id = randomUUID();
        await store.runs.createRun(tenant, { run_id: randomUUID(), session_id: id, agent_id: 'echo', start: { node_id: 'receive', input } });
        return id;
      };
      return { storage, store, clock, session };
    };

    it('refuses a patch that takes the state past its byte or key limit, writing nothing', async () => {
      const { store, session } = await setUp({ maxStateBytes: 200, maxStateKeys: 4 });
      const id = await session({ a: 'x'.repeat(50) });
      await store.sessions.appendCheckpoint(T, id, { patch: { b: 'y'.repeat(50) } });
      await expect(store.sessions.appendCheckpoint(T, id, { patch: { c: 'z'.repeat(100) } })).rejects.toMatchObject({ code: 'payload_too_large' });
      const kept = (await store.sessions.getCheckpoint(T, id))!;
      expect(kept.seq_num).toBe(2);
      expect(Object.keys(kept.state).sort()).toEqual(['a', 'b']);
      // Overwriting with a smaller value makes room again.
      await store.sessions.appendCheckpoint(T, id, { patch: { a: 1 } });
      await store.sessions.appendCheckpoint(T, id, { patch: { c: 'z'.repeat(100) } });
      await store.sessions.appendCheckpoint(T, id, { patch: { d: 1 } });
      await expect(store.sessions.appendCheckpoint(T, id, { patch: { e: 1 } })).rejects.toMatchObject({ code: 'bad_request' });
      expect((await store.sessions.getCheckpoint(T, id))!.seq_num).toBe(5);
    });

    it('answers the merged state with the write when asked and the state is small', async () => {
      const { store, session } = await setUp();
      const id = await session({ a: 1, list: [] });
      const written = await store.sessions.appendCheckpoint(T, id, { patch: { b: { c: 2 } }, withState: true });
      expect(written).toMatchObject({ seq_num: 2, state: { a: 1, list: [], b: { c: 2 } } });
      expect(await store.sessions.getCheckpoint(T, id)).toEqual(written);
    });

    it('refuses a run whose input passes a limit without creating its session or run', async () => {
      const { store } = await setUp({ maxStateBytes: 100 });
      const sessionId = randomUUID();
      const runId = randomUUID();
      await expect(
        store.runs.createRun(T, { run_id: runId, session_id: sessionId, agent_id: 'echo', start: { node_id: 'receive', input: { big: 'x'.repeat(200) } } }),
      ).rejects.toMatchObject({ code: 'payload_too_large' });
      expect(await store.sessions.getSession(T, sessionId)).toBeNull();
      expect(await store.runs.getRun(T, runId)).toBeNull();
      expect(await store.sessions.listSessions(T, { limit: 50, offset: 0 })).toEqual([]);
    });

    it('keeps the newest checkpoints, each with its exact state; the latest is never dropped', async () => {
      const { store, session } = await setUp({ checkpointsRetain: 5 });
      const id = await session({ n: 0 });
      const expected: JsonObject[] = [{ n: 0 }];
      for (let i = 1; i <= 11; i += 1) {
        const patch: JsonObject = i % 3 === 0 ? { n: i, [`k${i}`]: [i] } : { n: i };
        await store.sessions.appendCheckpoint(T, id, { patch });
        expected.push({ ...expected.at(-1)!, ...patch });
      }
      const history = (await store.sessions.listCheckpoints(T, id, { ...ALL, maxBytes: Infinity })).checkpoints;
      expect(history.map((c) => c.seq_num)).toEqual([12, 11, 10, 9, 8]);
      for (const checkpoint of history) expect(checkpoint.state).toEqual(expected[checkpoint.seq_num - 1]);
      expect(await store.sessions.getCheckpoint(T, id, 7)).toBeNull();
      expect((await store.sessions.getCheckpoint(T, id, 9))!.state).toEqual(expected[8]);
      expect((await store.sessions.getCheckpoint(T, id))!.state).toEqual(expected[11]);
    });

    it('stops a history page at its byte bound (one checkpoint always fits) and says where to go on', async () => {
      const { store, session } = await setUp();
      const id = await session({ pad: 'p'.repeat(1_000) });
      for (let i = 0; i < 6; i += 1) await store.sessions.appendCheckpoint(T, id, { patch: { i } });
      const seen: number[] = [];
      let offset = 0;
      for (let pages = 0; pages < 20; pages += 1) {
        const page = await store.sessions.listCheckpoints(T, id, { limit: 50, offset, maxBytes: 2_500 });
        expect(page.checkpoints.length).toBeGreaterThanOrEqual(1);
        expect(page.checkpoints.length).toBeLessThanOrEqual(2);
        seen.push(...page.checkpoints.map((c) => c.seq_num));
        offset += page.checkpoints.length;
        if (!page.more) break;
      }
      expect(seen).toEqual([7, 6, 5, 4, 3, 2, 1]);
      const tiny = await store.sessions.listCheckpoints(T, id, { limit: 50, offset: 0, maxBytes: 10 });
      expect(tiny.checkpoints.map((c) => c.seq_num)).toEqual([7]);
      expect(tiny.more).toBe(true);
    });

    it('counts a history page in UTF-8 bytes, not string length', async () => {
      const { store, session } = await setUp();
      // ~2,000 bytes of UTF-8 per checkpoint, ~1,000 UTF-16 units: one fits 2,500 bytes, two would not.
      const id = await session({ pad: 'é'.repeat(1_000) });
      for (let i = 0; i < 3; i += 1) await store.sessions.appendCheckpoint(T, id, { patch: { i } });
      const page = await store.sessions.listCheckpoints(T, id, { limit: 50, offset: 0, maxBytes: 2_500 });
      expect(page.checkpoints.map((c) => c.seq_num)).toEqual([4]);
      expect(page.more).toBe(true);
    });

    it('deletes a session with its runs, spans, history and approvals; refuses while a run is active', async () => {
      const { store, session } = await setUp();
      const id = await session();
      const [run] = await store.runs.listRuns(T, id, ALL);
      await expect(store.sessions.deleteSession(T, id)).rejects.toMatchObject({ code: 'conflict' });
      await store.sessions.addSpan(T, id, { span_id: 's', parent_id: '', name: 'n', start: 'a', end: 'b', attributes: {} });
      const pendingBefore = await store.approvals.countPendingApprovals();
      const approval = await store.approvals.createApproval(T, approvalOf(id, run!.id, '2026-11-01T00:00:00.000Z'));
      // interrupted is active too
      await expect(store.sessions.deleteSession(T, id)).rejects.toMatchObject({ code: 'conflict' });
      expect(await store.approvals.countPendingApprovals()).toBe(pendingBefore + 1);
      // Ending the run closes its pending approval (nobody can answer it any more).
      await store.runs.updateRun(T, run!.id, { status: 'failed', error: 'x', by: 'ops' });
      expect(await store.approvals.countPendingApprovals()).toBe(pendingBefore);
      expect(await store.approvals.getApproval(T, approval.id)).toMatchObject({ status: 'cancelled', decided_by: 'ops' });
      await expect(store.sessions.deleteSession(OTHER, id)).rejects.toMatchObject({ code: 'not_found' });
      await store.sessions.deleteSession(T, id);
      expect(await store.sessions.getSession(T, id)).toBeNull();
      expect(await store.sessions.getCheckpoint(T, id)).toBeNull();
      expect(await store.runs.getRun(T, run!.id)).toBeNull();
      expect(await store.approvals.getApproval(T, approval.id)).toBeNull();
      expect(await store.approvals.listPendingApprovals(T, ALL)).toEqual([]);
      expect(await store.approvals.countPendingApprovals()).toBe(pendingBefore);
      expect(await store.sessions.listSpans(T, id, ALL)).toEqual([]);
      expect(await store.sessions.listSessions(T, { limit: 50, offset: 0 })).toEqual([]);
      expect(await store.sessions.listSessions(T, { agent_id: 'echo', limit: 50, offset: 0 })).toEqual([]);
      await expect(store.sessions.deleteSession(T, id)).rejects.toMatchObject({ code: 'not_found' });
      // The id can start over as a new session.
      await store.runs.createRun(T, { run_id: randomUUID(), session_id: id, agent_id: 'other' });
      expect((await store.sessions.getSession(T, id))!.agent_id).toBe('other');
    });

    it('deletes the LangGraph thread of a deleted session (checkpoints, blobs, writes) and no other', async () => {
      const { storage, store, session } = await setUp();
      const [id, other, elsewhere] = [await session(), await session(), await session({ a: 1 }, OTHER)];
      await writeGraphThread(storage.graphCheckpoints, T, id);
      await writeGraphThread(storage.graphCheckpoints, T, other);
      await writeGraphThread(storage.graphCheckpoints, OTHER, elsewhere);
      // Refused while its run is active: the thread stays whole.
      await expect(store.sessions.deleteSession(T, id)).rejects.toMatchObject({ code: 'conflict' });
      await expectGraphThreadKept(storage, T, id);
      const [run] = await store.runs.listRuns(T, id, ALL);
      await store.runs.updateRun(T, run!.id, { status: 'completed' });
      await store.sessions.deleteSession(T, id);
      await expectGraphThreadGone(storage, T, id);
      await expectGraphThreadKept(storage, T, other);
      await expectGraphThreadKept(storage, OTHER, elsewhere);
    });

    it('expires the LangGraph thread with its idle session, keeping the threads of sessions still in use', async () => {
      const { storage, store, clock, session } = await setUp();
      const idle = await session();
      const [run] = await store.runs.listRuns(T, idle, ALL);
      await store.runs.updateRun(T, run!.id, { status: 'completed' });
      await writeGraphThread(storage.graphCheckpoints, T, idle);
      clock.advance(2 * HOUR);
      const recent = await session();
      const [recentRun] = await store.runs.listRuns(T, recent, ALL);
      await store.runs.updateRun(T, recentRun!.id, { status: 'completed' });
      await writeGraphThread(storage.graphCheckpoints, T, recent);
      expect(await store.sessions.expireSessions(clock.now() - HOUR, 100)).toBe(1);
      expect(await store.sessions.getSession(T, idle)).toBeNull();
      await expectGraphThreadGone(storage, T, idle);
      await expectGraphThreadKept(storage, T, recent);
    });

    it('expires sessions idle past the cutoff, whole, except those with a queued or running run', async () => {
      const { store, clock, session } = await setUp();
      const idle = await session();
      const [idleRun] = await store.runs.listRuns(T, idle, ALL);
      await store.runs.updateRun(T, idleRun!.id, { status: 'completed' });
      const paused = await session();
      const [pausedRun] = await store.runs.listRuns(T, paused, ALL);
      await store.approvals.createApproval(T, approvalOf(paused, pausedRun!.id, '2026-11-01T00:00:00.000Z'));
      const busy = await session(); // its run stays queued
      const elsewhere = await session({ a: 1 }, OTHER);
      const [elsewhereRun] = await store.runs.listRuns(OTHER, elsewhere, ALL);
      await store.runs.updateRun(OTHER, elsewhereRun!.id, { status: 'failed', error: 'x' });
      clock.advance(2 * HOUR);
      const recent = await session(); // its run stays queued too
      await store.sessions.appendCheckpoint(T, idle, { patch: { touched: true } });
      clock.advance(HOUR / 2);
      // Cutoff one hour ago: `idle` was written to half an hour ago, so it stays.
      const pendingBefore = await store.approvals.countPendingApprovals();
      expect(await store.sessions.expireSessions(clock.now() - HOUR, 100)).toBe(2);
      expect(await store.sessions.getSession(T, paused)).toBeNull();
      expect(await store.sessions.getSession(OTHER, elsewhere)).toBeNull();
      expect(await store.approvals.listPendingApprovals(T, ALL)).toEqual([]);
      expect(await store.approvals.countPendingApprovals()).toBe(pendingBefore - 1);
      for (const id of [idle, busy, recent]) expect(await store.sessions.getSession(T, id)).not.toBeNull();
      clock.advance(2 * HOUR);
      expect(await store.sessions.expireSessions(clock.now() - HOUR, 100)).toBe(1);
      expect(await store.sessions.getSession(T, idle)).toBeNull();
      expect((await store.sessions.listSessions(T, { limit: 50, offset: 0 })).map((s) => s.id)).toEqual([recent, busy]);
      expect(await store.sessions.expireSessions(clock.now() - HOUR, 100)).toBe(0);
    });

    it('never expires a session paused at an approval with runs queued behind it, until they end', async () => {
      const { store, clock, session } = await setUp();
      const id = await session();
      const [first] = await store.runs.listRuns(T, id, ALL);
      await store.approvals.createApproval(T, approvalOf(id, first!.id, '2026-11-01T00:00:00.000Z'));
      const behind = await store.runs.createRun(T, { run_id: randomUUID(), session_id: id, agent_id: 'echo', behind: true });
      expect(behind.behind).toBe(true);
      clock.advance(2 * HOUR);
      // Idle past the cutoff, but a run waits behind the paused one: the session is active.
      expect(await store.sessions.expireSessions(clock.now() - HOUR, 100)).toBe(0);
      expect(await store.sessions.getSession(T, id)).not.toBeNull();
      expect(await store.runs.getRun(T, behind.id)).toMatchObject({ status: 'queued' });
      expect(await store.approvals.getApproval(T, `${first!.id}.1`)).toMatchObject({ status: 'pending' });
      // The paused run ends, the queued one becomes current and ends: idle again, it expires.
      await store.runs.updateRun(T, first!.id, { status: 'cancelled' });
      const promotion = await store.runs.promoteNext(T, id);
      expect(promotion.started?.id).toBe(behind.id);
      await store.runs.updateRun(T, behind.id, { status: 'completed' });
      expect(await store.sessions.expireSessions(clock.now() - HOUR, 100)).toBe(0);
      clock.advance(2 * HOUR);
      expect(await store.sessions.expireSessions(clock.now() - HOUR, 100)).toBe(1);
      expect(await store.sessions.getSession(T, id)).toBeNull();
      expect(await store.runs.getRun(T, behind.id)).toBeNull();
    });

    it('skips sessions that cannot expire without starving the idle ones behind them', async () => {
      const { store, clock, session } = await setUp();
      const busy: string[] = [];
      for (let i = 0; i < 3; i += 1) busy.push(await session()); // runs stay queued
      clock.advance(1_000);
      const idle = await session();
      const [run] = await store.runs.listRuns(T, idle, ALL);
      await store.runs.updateRun(T, run!.id, { status: 'completed' });
      clock.advance(2 * HOUR);
      // A batch of 2 meets only busy sessions first; the idle one, older than the cutoff too, still goes.
      expect(await store.sessions.expireSessions(clock.now() - HOUR, 2)).toBe(1);
      expect(await store.sessions.getSession(T, idle)).toBeNull();
      for (const id of busy) expect(await store.sessions.getSession(T, id)).not.toBeNull();
    });

    it('expires at most `limit` sessions per call', async () => {
      const { store, clock, session } = await setUp();
      for (let i = 0; i < 5; i += 1) {
        const id = await session();
        const [run] = await store.runs.listRuns(T, id, ALL);
        await store.runs.updateRun(T, run!.id, { status: 'completed' });
      }
      clock.advance(HOUR);
      expect(await store.sessions.expireSessions(clock.now(), 3)).toBe(3);
      expect(await store.sessions.expireSessions(clock.now(), 3)).toBe(2);
      expect(await store.sessions.listSessions(T, { limit: 50, offset: 0 })).toEqual([]);
    });

    it('keeps the newest runs and spans of a session; older runs go with their decided approvals', async () => {
      const { store, clock, session } = await setUp({ runsRetain: 3, spansRetain: 4 });
      const id = await session();
      const runs: string[] = [];
      for (let i = 0; i < 5; i += 1) {
        const [current] = await store.runs.listRuns(T, id, { limit: 1, offset: 0 });
        runs.unshift(current!.id);
        await store.approvals.createApproval(T, approvalOf(id, current!.id, new Date(clock.now()).toISOString()));
        await store.approvals.decideApproval(T, `${current!.id}.1`, { approved: true, decided_by: 'u' });
        await store.runs.updateRun(T, current!.id, { status: 'completed' });
        clock.advance(1);
        await store.runs.createRun(T, { run_id: randomUUID(), session_id: id, agent_id: 'echo' });
      }
      const kept = (await store.runs.listRuns(T, id, ALL)).map((r) => r.id);
      expect(kept).toHaveLength(3);
      expect(kept.slice(1)).toEqual(runs.slice(0, 2));
      for (const dropped of runs.slice(2)) {
        expect(await store.runs.getRun(T, dropped)).toBeNull();
        expect(await store.approvals.getApproval(T, `${dropped}.1`)).toBeNull();
      }
      expect(await store.approvals.getApproval(T, `${runs[0]}.1`)).not.toBeNull();
      for (let i = 0; i < 6; i += 1) {
        await store.sessions.addSpan(T, id, { span_id: `s${i}`, parent_id: '', name: 'n', start: `2026-01-01T00:00:0${i}.000Z`, end: 'x', attributes: {} });
      }
      expect((await store.sessions.listSpans(T, id, ALL)).map((s) => s.span_id)).toEqual(['s2', 's3', 's4', 's5']);
    });

    it('pages runs (newest first), spans and pending approvals (oldest first)', async () => {
      const { store, clock, session } = await setUp();
      const id = await session();
      const runIds: string[] = [];
      for (let i = 0; i < 5; i += 1) {
        const [current] = await store.runs.listRuns(T, id, { limit: 1, offset: 0 });
        await store.runs.updateRun(T, current!.id, { status: 'completed' });
        runIds.unshift(current!.id);
        clock.advance(1);
        const run = await store.runs.createRun(T, { run_id: randomUUID(), session_id: id, agent_id: 'echo' });
        if (i === 4) runIds.unshift(run.id);
      }
      const all = (await store.runs.listRuns(T, id, ALL)).map((r) => r.id);
      expect(all).toHaveLength(6);
      expect((await store.runs.listRuns(T, id, { limit: 2, offset: 1 })).map((r) => r.id)).toEqual(all.slice(1, 3));
      for (let i = 0; i < 5; i += 1) {
        await store.sessions.addSpan(T, id, { span_id: `s${i}`, parent_id: '', name: 'n', start: `2026-01-01T00:00:0${i}.000Z`, end: 'x', attributes: {} });
      }
      expect((await store.sessions.listSpans(T, id, { limit: 2, offset: 2 })).map((s) => s.span_id)).toEqual(['s2', 's3']);
      const base = { session_id: id, node_id: 'n', prompt: 'p', run_id: 'r', agent_id: 'echo' };
      for (let i = 0; i < 4; i += 1) {
        await store.approvals.createApproval(T, { ...base, id: `a${i}`, requested_at: `2026-01-01T00:00:0${i}.000Z` });
      }
      expect((await store.approvals.listPendingApprovals(T, { limit: 2, offset: 1 })).map((a) => a.id)).toEqual(['a1', 'a2']);
    });
  });
}
