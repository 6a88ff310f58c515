import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { describe, expect, it, onTestFinished } from 'vitest';
import { MemoryEventBus } from '../../src/adapters/memory/event-bus.js';
import { MemoryRunQueue } from '../../src/adapters/memory/run-queue.js';
import { MemoryStore } from '../../src/adapters/memory/store.js';
import { BullRunQueue } from '../../src/adapters/redis/run-queue.js';
import { RedisStore } from '../../src/adapters/redis/store.js';
import type { RunQueue } from '../../src/ports/run-queue.js';
import type { Store } from '../../src/ports/store.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { createRunControl } from '../../src/runtime/run-control.js';
import { RunLifecycle } from '../../src/runtime/run-lifecycle.js';
import { createRunTimers } from '../../src/runtime/run-timers.js';
import agents from '../fixtures/agents.js';
import { manualClock } from '../contract/retention.contract.js';
import { uniquePrefix, useRedis } from '../support/redis.js';

const redis = useRedis();
const T = 'tenant-t';

/**
 * Run deadlines and approval expiries on a clock the test moves, over both stores: nothing
 * happens before the time, exactly one system decision after it (even with two sweepers at
 * once), a human answer that came first wins. No worker consumes the queue: every run waits for
 * its turn.
 */
function timersSuite(name: string, makeStore: (clock: () => number) => Store, makeQueue: () => RunQueue): void {
  describe(`run timers on a controlled clock: ${name}`, () => {
    const setUp = () => {
      const clock = manualClock();
      const store = makeStore(clock.now);
      const events = new MemoryEventBus(1_000);
      const queue = makeQueue();
      onTestFinished(() => queue.close());
      const logger = pino({ level: 'silent' });
      const lifecycle = new RunLifecycle({ store, events, queue, logger });
      const runs = createRunControl({ store, queue, agents: new AgentRegistry(agents), lifecycle, clock: clock.now });
      const sweepers = [createRunTimers({ store, runs, lifecycle, logger, clock: clock.now }), createRunTimers({ store, runs, lifecycle, logger, clock: clock.now })];
      const eventsOf = async (runId: string) => (await events.readAfter(T, '0-0', 1_000)).map((e) => e.event).filter((e) => e.run_id === runId);
      /** A running run of `expiring` that asks with this expiry. */
      const asking = async (onTimeout?: 'approve' | 'reject' | 'fail') => {
        const ticket = await runs.startRun(T, { agent_id: 'expiring', input: {} });
        await store.runs.updateRun(T, ticket.run_id, { status: 'running' });
        const approval = await store.approvals.createApproval(T, {
          id: `${ticket.run_id}.1`,
          session_id: ticket.session_id,
          run_id: ticket.run_id,
          agent_id: 'expiring',
          node_id: 'ask',
          prompt: 'Proceed?',
          requested_at: new Date(clock.now()).toISOString(),
          expires_at: new Date(clock.now() + 60_000).toISOString(),
          on_timeout: onTimeout ?? 'reject',
        });
        return { ticket, approval };
      };
      return { clock, store, queue, runs, sweepers, eventsOf, asking };
    };

    it('decides an expired approval once, by timeout (reject by default), and resumes its run', async () => {
      const { clock, store, queue, runs, sweepers, eventsOf, asking } = setUp();
      const { ticket, approval } = await asking();
      await Promise.all(sweepers.map((s) => s.sweep()));
      expect((await store.approvals.getApproval(T, approval.id))!.status).toBe('pending');
      clock.advance(59_999);
      await sweepers[0]!.sweep();
      expect((await store.approvals.getApproval(T, approval.id))!.status).toBe('pending');
      clock.advance(1);
      // Two workers sweep at once: one decision.
      await Promise.all(sweepers.map((s) => s.sweep()));
      expect(await store.approvals.getApproval(T, approval.id)).toMatchObject({ status: 'rejected', decided_by: 'timeout', comment: 'expired' });
      expect((await store.runs.getRun(T, ticket.run_id))!.status).toBe('queued');
      const decided = (await eventsOf(ticket.run_id)).filter((e) => e.type === 'approval_decided');
      expect(decided).toEqual([expect.objectContaining({ approval_id: approval.id, approved: false, by: 'timeout' })]);
      expect(await queue.hasLiveJob({ id: ticket.run_id, approval_id: approval.id })).toBe(true);
      await expect(runs.answerApproval(T, approval.id, { approved: true, decided_by: 'late' })).rejects.toMatchObject({ code: 'conflict' });
      expect(await store.timers.due(clock.now() + 1_000_000, 10)).toEqual([]);
    });

    it('approves on timeout when asked to', async () => {
      const { clock, store, sweepers, asking } = setUp();
      const { approval } = await asking('approve');
      clock.advance(60_000);
      await sweepers[0]!.sweep();
      expect(await store.approvals.getApproval(T, approval.id)).toMatchObject({ status: 'approved', decided_by: 'timeout' });
    });

    it('fails the run when on_timeout is fail: the approval is closed, its decision event, then the failed event', async () => {
      const { clock, store, sweepers, eventsOf, asking } = setUp();
      const { ticket, approval } = await asking('fail');
      clock.advance(60_000);
      await Promise.all(sweepers.map((s) => s.sweep()));
      expect(await store.runs.getRun(T, ticket.run_id)).toMatchObject({ status: 'failed', error: `The approval request ${approval.id} expired unanswered.` });
      expect(await store.approvals.getApproval(T, approval.id)).toMatchObject({ status: 'cancelled', decided_by: 'timeout' });
      const types = (await eventsOf(ticket.run_id)).map((e) => (e.type === 'approval_decided' ? `${e.type}:${e.by}:${e.approved}` : e.type));
      expect(types).toEqual(['approval_decided:timeout:false', 'failed']);
    });

    it('leaves an approval a human answered before it expired as the human decided it', async () => {
      const { clock, store, runs, sweepers, eventsOf, asking } = setUp();
      const { ticket, approval } = await asking();
      await runs.answerApproval(T, approval.id, { approved: true, comment: 'yes', decided_by: 'ana' });
      clock.advance(120_000);
      await sweepers[0]!.sweep();
      expect(await store.approvals.getApproval(T, approval.id)).toMatchObject({ status: 'approved', decided_by: 'ana', comment: 'yes' });
      expect((await eventsOf(ticket.run_id)).filter((e) => e.type === 'approval_decided')).toHaveLength(1);
    });

    it('cancels a run past its deadline with error "timeout", once; a run that ended first is left alone', async () => {
      const { clock, store, queue, runs, sweepers, eventsOf } = setUp();
      const late = await runs.startRun(T, { agent_id: 'echo', input: {}, timeout_ms: 5_000 });
      const done = await runs.startRun(T, { agent_id: 'echo', input: {}, timeout_ms: 5_000 });
      await store.runs.updateRun(T, done.run_id, { status: 'completed' });
      expect((await store.runs.getRun(T, late.run_id))!.deadline_at).toBe(new Date(clock.now() + 5_000).toISOString());
      clock.advance(4_999);
      await sweepers[0]!.sweep();
      expect((await store.runs.getRun(T, late.run_id))!.status).toBe('queued');
      // Still waiting for its turn: counted in the tenant's queue (with the job of the run ended by hand).
      expect(await queue.hasLiveJob({ id: late.run_id })).toBe(true);
      expect(await queue.depth(T)).toEqual({ tenant: T, queued: 2, running: 0 });
      clock.advance(1);
      await Promise.all(sweepers.map((s) => s.sweep()));
      expect(await store.runs.getRun(T, late.run_id)).toMatchObject({ status: 'cancelled', error: 'timeout' });
      // Past its deadline before its turn, it leaves the tenant's queue.
      expect(await queue.depth(T)).toEqual({ tenant: T, queued: 1, running: 0 });
      expect(await queue.hasLiveJob({ id: late.run_id })).toBe(false);
      expect((await eventsOf(late.run_id)).map((e) => [e.type, e.error])).toEqual([['cancelled', 'timeout']]);
      expect((await store.runs.getRun(T, done.run_id))!.status).toBe('completed');
      expect(await eventsOf(done.run_id)).toEqual([]);
    });
  });
}

timersSuite('memory', (clock) => new MemoryStore({ clock }), () => new MemoryRunQueue());
timersSuite(
  'redis',
  (clock) => new RedisStore(redis.connect(), { keyPrefix: uniquePrefix('timers'), clock }),
  () => new BullRunQueue({ connection: redis.connect({ maxRetriesPerRequest: null }), prefix: uniquePrefix('timers') }),
);

it('a run started without timeout_ms has none unless RUN_TIMEOUT_MS sets a default', async () => {
  const store = new MemoryStore();
  const events = new MemoryEventBus(10);
  const queue = new MemoryRunQueue();
  const lifecycle = new RunLifecycle({ store, events, queue, logger: pino({ level: 'silent' }) });
  const base = { store, queue, agents: new AgentRegistry(agents), lifecycle };
  const none = await createRunControl(base).startRun(T, { agent_id: 'echo', session_id: randomUUID() });
  expect((await store.runs.getRun(T, none.run_id))!.deadline_at).toBeUndefined();
  const withDefault = await createRunControl({ ...base, defaultTimeoutMs: 30_000, clock: () => 1_000 }).startRun(T, { agent_id: 'echo' });
  expect((await store.runs.getRun(T, withDefault.run_id))!.deadline_at).toBe(new Date(31_000).toISOString());
});
