import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ACTIVE_RUN_STATUSES } from '../../src/domain/types.js';
import type { NewApproval, StorageLimits, Store } from '../../src/ports/store.js';
import { waitFor } from '../support/wait.js';
import { manualClock } from './retention.contract.js';

/** A fresh Store stamping writes with `clock`, with these limits. */
export type LifecycleStoreFactory = (options: { clock: () => number; limits?: Partial<StorageLimits> }) => Promise<Store>;

const T = 'tenant-a';
const ALL = { limit: 10_000, offset: 0 };

function approval(sessionId: string, runId: string, id: string, requestedAt: string, extra: Partial<NewApproval> = {}): NewApproval {
  return { id, session_id: sessionId, run_id: runId, agent_id: 'echo', node_id: 'receive', prompt: 'ok?', requested_at: requestedAt, ...extra };
}

/**
 * The run lifecycle's storage rules, run against both adapters: ending a run closes its
 * approval, checkpoints conditional on the run still running, runs queued behind the active
 * one, the active-run index the reaper reads, timers, leases.
 */
export function lifecycleContract(name: string, make: LifecycleStoreFactory): void {
  describe(`Run lifecycle storage: ${name}`, () => {
    const setUp = async (limits?: Partial<StorageLimits>) => {
      const clock = manualClock();
      const store = await make({ clock: clock.now, ...(limits ? { limits } : {}) });
      const start = async (input: Record<string, unknown> = { a: 1 }, sessionId: string = randomUUID()) => {
        const run = await store.runs.createRun(T, { run_id: randomUUID(), session_id: sessionId, agent_id: 'echo', start: { node_id: 'receive', input } });
        return { run, sessionId };
      };
      return { store, clock, start };
    };

    it('a terminal status closes the run\'s pending approval; an ended run takes no new request and ends once', async () => {
      const { store, clock, start } = await setUp();
      const { run, sessionId } = await start();
      await store.runs.updateRun(T, run.id, { status: 'running' });
      const before = await store.approvals.countPendingApprovals();
      const asked = await store.approvals.createApproval(T, approval(sessionId, run.id, `${run.id}.1`, new Date(clock.now()).toISOString()));
      expect((await store.runs.getRun(T, run.id))!.status).toBe('interrupted');
      expect(await store.approvals.countPendingApprovals()).toBe(before + 1);
      const cancelled = await store.runs.updateRun(T, run.id, { status: 'cancelled', error: 'cancelled', from: ACTIVE_RUN_STATUSES, by: 'ana' });
      expect(cancelled).toMatchObject({ status: 'cancelled', error: 'cancelled' });
      expect(await store.approvals.getApproval(T, asked.id)).toMatchObject({ status: 'cancelled', decided_by: 'ana' });
      expect(await store.approvals.listPendingApprovals(T, ALL)).toEqual([]);
      expect(await store.approvals.countPendingApprovals()).toBe(before);
      await expect(store.approvals.decideApproval(T, asked.id, { approved: true, decided_by: 'bo' })).rejects.toMatchObject({ code: 'conflict' });
      await expect(store.runs.updateRun(T, run.id, { status: 'failed', error: 'x', from: ACTIVE_RUN_STATUSES })).rejects.toMatchObject({ code: 'conflict' });
      await expect(
        store.approvals.createApproval(T, approval(sessionId, run.id, `${run.id}.1.2`, new Date(clock.now()).toISOString())),
      ).rejects.toMatchObject({ code: 'conflict' });
      expect((await store.runs.getRun(T, run.id))!.status).toBe('cancelled');
    });

    it('writes a run\'s checkpoint only while that run is the running current one', async () => {
      const { store, start } = await setUp();
      const { run, sessionId } = await start();
      await expect(store.sessions.appendCheckpoint(T, sessionId, { patch: { b: 1 }, runId: run.id })).rejects.toMatchObject({ code: 'conflict' });
      await store.runs.updateRun(T, run.id, { status: 'running' });
      expect((await store.sessions.appendCheckpoint(T, sessionId, { patch: { b: 1 }, runId: run.id })).seq_num).toBe(2);
      await expect(store.sessions.appendCheckpoint(T, sessionId, { patch: { c: 1 }, runId: 'another-run' })).rejects.toMatchObject({ code: 'conflict' });
      await store.runs.updateRun(T, run.id, { status: 'cancelled', error: 'cancelled' });
      await expect(store.sessions.appendCheckpoint(T, sessionId, { patch: { c: 1 }, runId: run.id })).rejects.toMatchObject({ code: 'conflict' });
      expect(await store.sessions.getCheckpoint(T, sessionId)).toMatchObject({ seq_num: 2, state: { a: 1, b: 1 } });
    });

    it('queues runs behind the active one and makes them current in order, each with its input', async () => {
      const { store, clock, start } = await setUp();
      const { run: first, sessionId } = await start({ a: 1 });
      const behind = (input: Record<string, unknown>) => {
        clock.advance(1); // distinct created_at: runs list newest first
        return store.runs.createRun(T, { run_id: randomUUID(), session_id: sessionId, agent_id: 'echo', start: { node_id: 'receive', input }, behind: true });
      };
      const second = await behind({ b: 2 });
      const third = await behind({ c: 3 });
      expect(second).toMatchObject({ status: 'queued', behind: true });
      await expect(store.runs.createRun(T, { run_id: randomUUID(), session_id: sessionId, agent_id: 'echo' })).rejects.toMatchObject({ code: 'conflict' });
      expect((await store.runs.latestRun(T, sessionId))!.id).toBe(first.id);
      expect(await store.sessions.getCheckpoint(T, sessionId)).toMatchObject({ seq_num: 1, state: { a: 1 } });
      expect(await store.runs.promoteNext(T, sessionId)).toEqual({ started: null, failed: [] });
      expect(await store.runs.updateRun(T, first.id, { status: 'completed' })).toMatchObject({ queued_behind: true });
      expect((await store.runs.promoteNext(T, sessionId)).started).toMatchObject({ id: second.id, status: 'queued' });
      expect((await store.runs.latestRun(T, sessionId))!.id).toBe(second.id);
      expect(await store.sessions.getCheckpoint(T, sessionId)).toMatchObject({ seq_num: 2, node_id: 'receive', state: { a: 1, b: 2 } });
      expect((await store.runs.promoteNext(T, sessionId)).started).toBeNull();
      // A run cancelled while it waits leaves the queue.
      expect(await store.runs.updateRun(T, third.id, { status: 'cancelled', error: 'cancelled' })).not.toHaveProperty('queued_behind');
      expect(await store.runs.updateRun(T, second.id, { status: 'failed', error: 'x' })).not.toHaveProperty('queued_behind');
      expect(await store.runs.promoteNext(T, sessionId)).toEqual({ started: null, failed: [] });
      expect((await store.runs.listRuns(T, sessionId, ALL)).map((r) => [r.id, r.status])).toEqual([
        [third.id, 'cancelled'],
        [second.id, 'failed'],
        [first.id, 'completed'],
      ]);
      expect((await store.sessions.getCheckpoint(T, sessionId))!.state).toEqual({ a: 1, b: 2 });
    });

    it('fails a run queued behind whose input no longer fits the state limits, and starts the next', async () => {
      const { store, start } = await setUp({ maxStateKeys: 2 });
      const { run: first, sessionId } = await start({ a: 1 });
      const queue = (input: Record<string, unknown>) =>
        store.runs.createRun(T, { run_id: randomUUID(), session_id: sessionId, agent_id: 'echo', start: { node_id: 'receive', input }, behind: true });
      const tooBig = await queue({ b: 1, c: 1 });
      const fits = await queue({ a: 2 });
      await store.runs.updateRun(T, first.id, { status: 'completed' });
      const promoted = await store.runs.promoteNext(T, sessionId);
      expect(promoted.started).toMatchObject({ id: fits.id });
      expect(promoted.failed).toEqual([expect.objectContaining({ id: tooBig.id, status: 'failed', error: expect.stringMatching(/key limit/) })]);
      expect(await store.runs.getRun(T, tooBig.id)).toMatchObject({ status: 'failed', error: expect.stringMatching(/key limit/) });
      expect((await store.sessions.getCheckpoint(T, sessionId))!.state).toEqual({ a: 2 });
    });

    it('lists the active runs unchanged since a cutoff, saying which wait behind', async () => {
      const { store, clock, start } = await setUp();
      const { run: old, sessionId } = await start();
      const waiting = await store.runs.createRun(T, { run_id: randomUUID(), session_id: sessionId, agent_id: 'echo', behind: true });
      clock.advance(10_000);
      const { run: recent } = await start();
      const { run: done } = await start();
      await store.runs.updateRun(T, done.id, { status: 'completed' });
      const listed = await store.runs.listActiveRuns(clock.now() - 5_000, 100);
      const mine = listed.filter((a) => [old.id, waiting.id, recent.id, done.id].includes(a.run.id));
      expect(mine.map((a) => [a.run.id, a.behind, a.tenant]).sort()).toEqual(
        [
          [old.id, false, T],
          [waiting.id, true, T],
        ].sort(),
      );
      expect((await store.runs.listActiveRuns(clock.now(), 100)).map((a) => a.run.id)).toContain(recent.id);
    });

    it('keeps deadlines and expiries as timers, due in order; a run\'s end drops its deadline', async () => {
      const { store, clock, start } = await setUp();
      const now = clock.now();
      const deadline = await store.runs.createRun(T, {
        run_id: randomUUID(),
        session_id: randomUUID(),
        agent_id: 'echo',
        start: { node_id: 'receive', input: {} },
        deadline_ms: now + 2_000,
      });
      expect(deadline.deadline_at).toBe(new Date(now + 2_000).toISOString());
      const { run: asking, sessionId } = await start();
      await store.runs.updateRun(T, asking.id, { status: 'running' });
      const expiresAt = new Date(now + 1_000).toISOString();
      const asked = await store.approvals.createApproval(
        T,
        approval(sessionId, asking.id, `${asking.id}.1`, new Date(now).toISOString(), { expires_at: expiresAt, on_timeout: 'approve' }),
      );
      expect(asked).toMatchObject({ expires_at: expiresAt, on_timeout: 'approve' });
      expect((await store.approvals.listPendingApprovals(T, ALL))[0]).toMatchObject({ id: asked.id, expires_at: expiresAt });
      expect(await store.timers.due(now, 10)).toEqual([]);
      const due = await store.timers.due(now + 5_000, 10);
      expect(due).toEqual([
        { kind: 'approval', tenant: T, id: asked.id, dueMs: now + 1_000 },
        { kind: 'run', tenant: T, id: deadline.id, dueMs: now + 2_000 },
      ]);
      await store.timers.clear(due[0]!);
      expect((await store.timers.due(now + 5_000, 10)).map((t) => t.id)).toEqual([deadline.id]);
      await store.runs.updateRun(T, deadline.id, { status: 'completed' });
      expect(await store.timers.due(now + 5_000, 10)).toEqual([]);
    });

    it('grants a lease to one holder at a time', async () => {
      const { store } = await setUp();
      const name = `lease-${randomUUID()}`;
      expect(await store.leases.acquire(name, 60_000)).toBe(true);
      expect(await store.leases.acquire(name, 60_000)).toBe(false);
      expect(await store.leases.acquire(`${name}-other`, 60_000)).toBe(true);
    });

    it('keeps a held lease for its holder: extended by it, refused to others, dropped only by it, taken by another once lapsed', async () => {
      const { store, clock } = await setUp();
      const name = `held-${randomUUID()}`;
      expect(await store.leases.hold(name, 'a', 60_000)).toBe(true);
      expect(await store.leases.hold(name, 'a', 60_000)).toBe(true);
      expect(await store.leases.hold(name, 'b', 60_000)).toBe(false);
      expect(await store.leases.acquire(name, 60_000)).toBe(false);
      await store.leases.drop(name, 'b');
      expect(await store.leases.hold(name, 'b', 60_000)).toBe(false);
      await store.leases.drop(name, 'a');
      expect(await store.leases.hold(name, 'b', 50)).toBe(true);
      // Lapsed (the memory store's clock moved on; Redis's time passes while waiting): another takes it, and the old holder's drop leaves it.
      clock.advance(51);
      await waitFor('the lease to lapse', () => store.leases.hold(name, 'c', 60_000));
      await store.leases.drop(name, 'b');
      expect(await store.leases.hold(name, 'b', 60_000)).toBe(false);
    });

    it('keeps sessions named like the indexes (active, behind:…, all, pending) apart from them', async () => {
      const { store, start } = await setUp();
      const tag = randomUUID().slice(0, 8);
      // Session "active" (a tenant's active-run index once shared its key): its run stays listed after it ends.
      const { run: named } = await start({ a: 1 }, 'active');
      await store.runs.updateRun(T, named.id, { status: 'completed' });
      expect((await store.runs.listRuns(T, 'active', ALL)).map((r) => r.id)).toContain(named.id);
      expect((await store.runs.listActiveRuns(Number.MAX_SAFE_INTEGER, 10_000)).map((a) => a.run.id)).not.toContain(named.id);
      // A session "behind:<id>" and the queue behind session <id> do not share a key.
      const { run: lookalike } = await start({ a: 1 }, `behind:${tag}`);
      const { run: current } = await start({ a: 1 }, tag);
      const waiting = await store.runs.createRun(T, { run_id: randomUUID(), session_id: tag, agent_id: 'echo', behind: true });
      expect(waiting).toMatchObject({ behind: true });
      expect((await store.runs.listRuns(T, `behind:${tag}`, ALL)).map((r) => r.id)).toEqual([lookalike.id]);
      expect(await store.runs.updateRun(T, current.id, { status: 'completed' })).toMatchObject({ queued_behind: true });
      expect((await store.runs.promoteNext(T, tag)).started?.id).toBe(waiting.id);
      for (const sessionId of ['all', 'pending', 'decided', 'activity']) {
        const { run } = await start({ a: 1 }, sessionId);
        expect((await store.runs.listRuns(T, sessionId, ALL)).map((r) => r.id), sessionId).toEqual([run.id]);
      }
    });
  });
}
