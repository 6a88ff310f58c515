import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RunStatus } from '../../src/domain/types.js';
import type { RunListOptions, StorageLimits } from '../../src/ports/store.js';
import { manualClock, type BoundedStoreFactory } from './retention.contract.js';

const T = 'tenant-a';
// On the test Redis Cluster, T and OTHER land on different masters (test/cluster checks it).
const OTHER = 'tenant-c';
const ALL = { limit: 10_000, offset: 0 };
const LIMITS: StorageLimits = { maxStateBytes: 10_000, maxStateKeys: 100, checkpointsRetain: 50, runsRetain: 100, spansRetain: 1_000 };
const HOUR = 3_600_000;

/**
 * The tenant-wide lists, run against both adapters on a clock the test moves: runs newest
 * first filtered by status and agent (GET /api/runs without session_id), decided approvals
 * newest decided first (GET /api/approvals?status=decided); both paged, per tenant, and
 * emptied of what a session takes with it when it is deleted, expires or drops old runs.
 */
export function listingContract(name: string, make: BoundedStoreFactory): void {
  describe(`Listing contract: ${name}`, () => {
    const setUp = async (limits: Partial<StorageLimits> = {}) => {
      const clock = manualClock();
      const store = await make({ limits: { ...LIMITS, ...limits }, clock: clock.now });
      /** A run (on a new session unless one is named), one ms after the previous one. */
      const run = async (agent: string, sessionId: string = randomUUID(), tenant = T) => {
        clock.advance(1);
        return store.runs.createRun(tenant, { run_id: randomUUID(), session_id: sessionId, agent_id: agent, start: { node_id: 'n', input: {} } });
      };
      const ask = async (runId: string, sessionId: string, tenant = T) => {
        clock.advance(1);
        const base = { session_id: sessionId, run_id: runId, agent_id: 'human-review', node_id: 'review', prompt: 'ok?' };
        return store.approvals.createApproval(tenant, { ...base, id: `${runId}.1`, requested_at: new Date(clock.now()).toISOString() });
      };
      const ids = async (options: Partial<RunListOptions> = {}, tenant = T) => (await store.runs.findRuns(tenant, { ...ALL, ...options })).map((r) => r.id);
      return { store, clock, run, ask, ids };
    };

    it("lists the tenant's runs newest first, filtered by status, agent or both, and paged", async () => {
      const { store, run, ask, ids } = await setUp();
      const e1 = await run('echo');
      const h1 = await run('human-review');
      const e2 = await run('echo');
      const h2 = await run('human-review');
      const set = (id: string, status: RunStatus, error?: string) => store.runs.updateRun(T, id, { status, ...(error ? { error } : {}) });
      await set(e1.id, 'completed');
      const e3 = await run('echo', e1.session_id);
      await run('echo', randomUUID(), OTHER);
      await set(e2.id, 'failed', 'boom');
      await ask(h1.id, h1.session_id);
      await set(h2.id, 'running');
      await set(h2.id, 'completed');

      expect(await ids()).toEqual([e3.id, h2.id, e2.id, h1.id, e1.id]);
      expect(await ids({ status: 'completed' })).toEqual([h2.id, e1.id]);
      expect(await ids({ status: 'interrupted' })).toEqual([h1.id]);
      expect(await ids({ status: 'queued' })).toEqual([e3.id]);
      expect(await ids({ status: 'running' })).toEqual([]);
      expect(await ids({ agent_id: 'echo' })).toEqual([e3.id, e2.id, e1.id]);
      expect(await ids({ agent_id: 'echo', status: 'completed' })).toEqual([e1.id]);
      expect(await ids({ agent_id: 'human-review', status: 'completed' })).toEqual([h2.id]);
      expect(await ids({ agent_id: 'nobody' })).toEqual([]);
      expect(await ids({ limit: 2, offset: 1 })).toEqual([h2.id, e2.id]);
      expect(await ids({ status: 'completed', limit: 1, offset: 1 })).toEqual([e1.id]);
      expect(await ids({ offset: 5 })).toEqual([]);
      const [failed] = await store.runs.findRuns(T, { ...ALL, status: 'failed' });
      expect(failed).toMatchObject({ id: e2.id, agent_id: 'echo', status: 'failed', error: 'boom', session_id: e2.session_id });
      // A session's runs with the same filters; without a filter, as listRuns.
      expect(await ids({ session_id: e1.session_id })).toEqual([e3.id, e1.id]);
      expect(await ids({ session_id: e1.session_id, status: 'completed' })).toEqual([e1.id]);
      expect(await ids({ session_id: e1.session_id, agent_id: 'human-review' })).toEqual([]);
      expect(await ids({ session_id: e1.session_id, limit: 1, offset: 1 })).toEqual([e1.id]);
      expect(await ids({}, OTHER)).toHaveLength(1);
      expect(await ids({ session_id: e1.session_id }, OTHER)).toEqual([]);
    });

    it("reads each session's latest run and checkpoint in the order asked, nulls for what a session lacks or a session that is gone", async () => {
      const { store, run } = await setUp();
      const a = await run('echo');
      await store.runs.updateRun(T, a.id, { status: 'running' });
      await store.sessions.appendCheckpoint(T, a.session_id, { patch: { n: 1, words: ['a', 'b'] }, node_id: 'next' });
      await store.runs.updateRun(T, a.id, { status: 'failed', error: 'boom' });
      const b = await run('echo');
      const bare = await store.sessions.createSession(T, { session_id: randomUUID() });
      const latest = await store.latestOfSessions(T, [b.session_id, 'no-such-session', a.session_id, bare.id], 1_000_000);
      expect(latest.map((l) => [l.run?.id ?? null, l.run?.status ?? null])).toEqual([[b.id, 'queued'], [null, null], [a.id, 'failed'], [null, null]]);
      expect(latest[2]!.run).toMatchObject({ session_id: a.session_id, agent_id: 'echo', error: 'boom' });
      expect(latest[0]!.checkpoint).toMatchObject({ session_id: b.session_id, seq_num: 1, node_id: 'n', state: {} });
      expect(latest[2]!.checkpoint).toMatchObject({ session_id: a.session_id, seq_num: 2, node_id: 'next', state: { n: 1, words: ['a', 'b'] } });
      expect(latest[2]!.checkpoint).toEqual(await store.sessions.getCheckpoint(T, a.session_id));
      expect([latest[1]!.checkpoint, latest[3]!.checkpoint]).toEqual([null, null]);
      // Another tenant's read finds none of them.
      expect((await store.latestOfSessions(OTHER, [a.session_id], 1_000_000)).map((l) => [l.run, l.checkpoint])).toEqual([[null, null]]);
      expect(await store.latestOfSessions(T, [], 1_000_000)).toEqual([]);
    });

    it('reads states up to the byte budget (the first whatever its size); a backend that stops leaves the later checkpoints out, runs still read', async () => {
      const { store, run } = await setUp();
      const sessions: string[] = [];
      for (let i = 0; i < 3; i += 1) {
        const r = await run('echo');
        await store.runs.updateRun(T, r.id, { status: 'running' });
        await store.sessions.appendCheckpoint(T, r.session_id, { patch: { text: 'x'.repeat(2_000) }, node_id: 'next' });
        sessions.push(r.session_id);
      }
      const latest = await store.latestOfSessions(T, sessions, 3_000);
      expect(latest.map((l) => l.run?.status)).toEqual(['running', 'running', 'running']);
      expect(latest[0]!.checkpoint?.state).toEqual({ text: 'x'.repeat(2_000) });
      for (const [i, l] of latest.entries()) {
        // Read (and then whole) or left out (undefined), never a wrong state.
        if (l.checkpoint !== undefined) expect(l.checkpoint).toEqual(await store.sessions.getCheckpoint(T, sessions[i]!));
      }
      if (name === 'redis') expect(latest.map((l) => l.checkpoint === undefined)).toEqual([false, true, true]);
    });

    it('moves a run between the status lists as its status changes: queued, running, interrupted, queued, completed', async () => {
      const { store, run, ask, ids } = await setUp();
      const waiting = await run('human-review'); // stays queued, older than r: what a page shows once r left
      const r = await run('human-review');
      /** The first run of each status list, by status alone and by status and agent: they agree. */
      const firsts = async () => {
        const out: Record<string, string | null> = {};
        for (const status of ['queued', 'running', 'interrupted', 'completed'] as const) {
          const [byStatus = null] = await ids({ status, limit: 1 });
          const [byBoth = null] = await ids({ status, agent_id: 'human-review', limit: 1 });
          expect(byBoth).toBe(byStatus);
          out[status] = byStatus === r.id ? 'r' : byStatus === waiting.id ? 'waiting' : byStatus;
        }
        return out;
      };
      expect(await firsts()).toEqual({ queued: 'r', running: null, interrupted: null, completed: null });
      await store.runs.updateRun(T, r.id, { status: 'running' });
      expect(await firsts()).toEqual({ queued: 'waiting', running: 'r', interrupted: null, completed: null });
      const approval = await ask(r.id, r.session_id);
      expect(await firsts()).toEqual({ queued: 'waiting', running: null, interrupted: 'r', completed: null });
      await store.approvals.decideApproval(T, approval.id, { approved: true, decided_by: 'ana' });
      expect(await firsts()).toEqual({ queued: 'r', running: null, interrupted: null, completed: null });
      await store.runs.updateRun(T, r.id, { status: 'completed' });
      expect(await firsts()).toEqual({ queued: 'waiting', running: null, interrupted: null, completed: 'r' });
      expect(await ids()).toEqual([r.id, waiting.id]);
    });

    it('lists decided approvals newest decided first (approved, rejected, closed with their run), paged and per tenant', async () => {
      const { store, clock, run, ask } = await setUp();
      const runs = [await run('human-review'), await run('human-review'), await run('human-review'), await run('human-review')];
      const [a, b, c, d] = await Promise.all(runs.map((r) => ask(r.id, r.session_id)));
      const other = await run('human-review', randomUUID(), OTHER);
      const theirs = await ask(other.id, other.session_id, OTHER);
      expect(await store.approvals.listDecidedApprovals(T, ALL)).toEqual([]);
      clock.advance(1);
      await store.approvals.decideApproval(T, b!.id, { approved: true, comment: 'yes', decided_by: 'ana' });
      clock.advance(1);
      await store.runs.updateRun(T, runs[3]!.id, { status: 'cancelled', error: 'cancelled', by: 'bob' });
      clock.advance(1);
      await store.approvals.decideApproval(T, a!.id, { approved: false, comment: 'no', decided_by: 'cy' });
      clock.advance(1);
      await store.approvals.decideApproval(OTHER, theirs.id, { approved: true, decided_by: 'x' });

      const decided = await store.approvals.listDecidedApprovals(T, ALL);
      expect(decided.map((x) => [x.id, x.status, x.decided_by])).toEqual([
        [a!.id, 'rejected', 'cy'],
        [d!.id, 'cancelled', 'bob'],
        [b!.id, 'approved', 'ana'],
      ]);
      expect(decided[0]).toMatchObject({ comment: 'no', decided_at: new Date(clock.now() - 1).toISOString(), run_id: runs[0]!.id });
      expect((await store.approvals.listDecidedApprovals(T, { limit: 1, offset: 1 })).map((x) => x.id)).toEqual([d!.id]);
      expect((await store.approvals.listPendingApprovals(T, ALL)).map((x) => x.id)).toEqual([c!.id]);
      expect((await store.approvals.listDecidedApprovals(OTHER, ALL)).map((x) => x.id)).toEqual([theirs.id]);
    });

    it('deletes an ended run with its decided approval, out of every list; refuses an active one', async () => {
      const { store, run, ask, ids } = await setUp();
      const decided = async () => (await store.approvals.listDecidedApprovals(T, ALL)).map((x) => x.id);
      const kept = await run('human-review');
      await store.runs.updateRun(T, kept.id, { status: 'completed' });
      const gone = await run('human-review', kept.session_id);
      const asked = await ask(gone.id, gone.session_id);
      await expect(store.runs.deleteRun(T, gone.id)).rejects.toMatchObject({ code: 'conflict' });
      await store.approvals.decideApproval(T, asked.id, { approved: true, decided_by: 'ana' });
      await store.runs.updateRun(T, gone.id, { status: 'completed' });
      await expect(store.runs.deleteRun(OTHER, gone.id)).rejects.toMatchObject({ code: 'not_found' });
      expect(await decided()).toEqual([asked.id]);
      await store.runs.deleteRun(T, gone.id);
      expect(await store.runs.getRun(T, gone.id)).toBeNull();
      expect(await store.approvals.getApproval(T, asked.id)).toBeNull();
      expect(await decided()).toEqual([]);
      expect(await ids()).toEqual([kept.id]);
      expect(await ids({ status: 'completed', agent_id: 'human-review' })).toEqual([kept.id]);
      expect((await store.runs.listRuns(T, kept.session_id, ALL)).map((r) => r.id)).toEqual([kept.id]);
      // It was the session's latest run: the session has none until the next.
      expect(await store.runs.latestRun(T, kept.session_id)).toBeNull();
      await expect(store.runs.deleteRun(T, gone.id)).rejects.toMatchObject({ code: 'not_found' });
      const next = await run('human-review', kept.session_id);
      expect((await store.runs.latestRun(T, kept.session_id))?.id).toBe(next.id);
    });

    // Each page below is one item deep, behind what was removed: an entry left in an index would
    // come first and make that page short (empty) instead of holding the older item.
    it('takes runs and decided approvals out of the lists with their session: oldest runs dropped, deleted, expired', async () => {
      const { store, clock, run, ask, ids } = await setUp({ runsRetain: 2 });
      const decided = async (page: { limit: number; offset: number }) => (await store.approvals.listDecidedApprovals(T, page)).map((x) => x.id);
      const older = await run('human-review');
      const olderAsked = await ask(older.id, older.session_id);
      await store.approvals.decideApproval(T, olderAsked.id, { approved: true, decided_by: 'ana' });
      await store.runs.updateRun(T, older.id, { status: 'completed' });

      // A session keeps its 2 newest runs: its first goes, with its decided approval.
      const first = await run('human-review');
      const asked = await ask(first.id, first.session_id);
      await store.approvals.decideApproval(T, asked.id, { approved: false, decided_by: 'ana' });
      await store.runs.updateRun(T, first.id, { status: 'completed' });
      const second = await run('human-review', first.session_id);
      await store.runs.updateRun(T, second.id, { status: 'completed' });
      expect(await ids({ status: 'completed' })).toEqual([second.id, first.id, older.id]);
      const third = await run('human-review', first.session_id);
      expect(await ids()).toEqual([third.id, second.id, older.id]);
      expect(await ids({ status: 'completed', limit: 1, offset: 1 })).toEqual([older.id]);
      expect(await ids({ status: 'completed', agent_id: 'human-review', limit: 1, offset: 1 })).toEqual([older.id]);
      expect(await ids({ agent_id: 'human-review', limit: 1, offset: 2 })).toEqual([older.id]);
      expect(await decided({ limit: 1, offset: 0 })).toEqual([olderAsked.id]);
      await store.runs.updateRun(T, third.id, { status: 'failed', error: 'x' });

      // Deleted: a newer session with a decided approval, its run completed.
      const gone = await run('human-review');
      const goneAsked = await ask(gone.id, gone.session_id);
      await store.approvals.decideApproval(T, goneAsked.id, { approved: true, decided_by: 'ana' });
      await store.runs.updateRun(T, gone.id, { status: 'completed' });
      expect(await ids({ status: 'completed', limit: 1 })).toEqual([gone.id]);
      expect(await decided({ limit: 1, offset: 0 })).toEqual([goneAsked.id]);
      await store.sessions.deleteSession(T, gone.session_id);
      expect(await ids({ limit: 1 })).toEqual([third.id]);
      expect(await ids({ status: 'completed', limit: 1 })).toEqual([second.id]);
      expect(await ids({ agent_id: 'human-review', limit: 1 })).toEqual([third.id]);
      expect(await ids({ status: 'completed', agent_id: 'human-review', limit: 1 })).toEqual([second.id]);
      expect(await decided({ limit: 1, offset: 0 })).toEqual([olderAsked.id]);

      // Expired: every session but the oldest, written to since, goes with its runs and approvals.
      clock.advance(HOUR);
      await store.sessions.appendCheckpoint(T, older.session_id, { patch: { touched: true } });
      expect(await store.sessions.expireSessions(clock.now() - HOUR / 2, 100)).toBe(1);
      expect(await ids({ limit: 1 })).toEqual([older.id]);
      expect(await ids({ status: 'completed', limit: 1 })).toEqual([older.id]);
      expect(await ids({ agent_id: 'human-review', limit: 1 })).toEqual([older.id]);
      expect(await ids({ status: 'completed', agent_id: 'human-review', limit: 1 })).toEqual([older.id]);
      expect(await ids({ status: 'failed' })).toEqual([]);
      expect(await decided({ limit: 1, offset: 0 })).toEqual([olderAsked.id]);
    });
  });
}
