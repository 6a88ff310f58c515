import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_APPROVAL_JSON_BYTES, type Span } from '../../src/domain/types.js';
import type { Store } from '../../src/ports/store.js';

/** Builds a fresh Store for one test; both adapters must pass every test of this suite. */
export type StoreFactory = () => Promise<Store>;

/** Every item of a list read (a page larger than any test writes). */
const ALL = { limit: 10_000, offset: 0 };
const T = 'tenant-a';
// On the test Redis Cluster, T and OTHER land on different masters (test/cluster checks it).
const OTHER = 'tenant-c';

async function sessionWithCheckpoint(store: Store, sessionId = randomUUID(), agent = 'echo'): Promise<string> {
  await store.runs.createRun(T, { run_id: randomUUID(), session_id: sessionId, agent_id: agent });
  await store.sessions.appendCheckpoint(T, sessionId, { patch: { a: 1, nested: { x: 1 } }, node_id: 'receive' });
  return sessionId;
}

export function storeContract(name: string, makeStore: StoreFactory): void {
  describe(`Store contract: ${name}`, () => {
    it('creates a session with its first run and lists it newest first, filtered by agent', async () => {
      const store = await makeStore();
      const ids: string[] = [];
      for (const agent of ['echo', 'other', 'echo']) {
        const id = randomUUID();
        ids.push(id);
        await store.runs.createRun(T, { run_id: randomUUID(), session_id: id, agent_id: agent });
        await new Promise((r) => setTimeout(r, 2));
      }
      const all = await store.sessions.listSessions(T, { limit: 50, offset: 0 });
      expect(all.map((s) => s.id)).toEqual([...ids].reverse());
      expect(all[0]).toMatchObject({ agent_id: 'echo', tenant_id: T });
      const echo = await store.sessions.listSessions(T, { agent_id: 'echo', limit: 50, offset: 0 });
      expect(echo.map((s) => s.id)).toEqual([ids[2], ids[0]]);
      expect(await store.sessions.listSessions(T, { limit: 1, offset: 1 })).toHaveLength(1);
      expect((await store.sessions.listSessions(T, { limit: 1, offset: 1 }))[0]!.id).toBe(ids[1]);
      expect(await store.sessions.listSessions(OTHER, { limit: 50, offset: 0 })).toEqual([]);
    });

    it('appends checkpoints with consecutive seq_nums and a shallow merge', async () => {
      const store = await makeStore();
      const id = await sessionWithCheckpoint(store);
      const second = await store.sessions.appendCheckpoint(T, id, { patch: { b: [], nested: { y: 2 }, big: 9007199254740991 } });
      expect(second.seq_num).toBe(2);
      expect(second.node_id).toBe('receive');
      // A write answers the checkpoint without its state (O(patch)); the state is read back by seq_num.
      expect(second).not.toHaveProperty('state');
      expect((await store.sessions.getCheckpoint(T, id, 2))!.state).toEqual({ a: 1, b: [], nested: { y: 2 }, big: 9007199254740991 });
      const third = await store.sessions.appendCheckpoint(T, id, { patch: { c: null }, node_id: '__end__' });
      expect(third).toMatchObject({ seq_num: 3, node_id: '__end__', session_id: id });
      expect(third.checkpoint_id).not.toBe(second.checkpoint_id);
      expect(await store.sessions.getCheckpoint(T, id)).toEqual({ ...third, state: { a: 1, b: [], nested: { y: 2 }, big: 9007199254740991, c: null } });
      expect((await store.sessions.getCheckpoint(T, id, 1))!.state).toEqual({ a: 1, nested: { x: 1 } });
      expect(await store.sessions.getCheckpoint(T, id, 4)).toBeNull();
      const history = (await store.sessions.listCheckpoints(T, id, { limit: 50, offset: 0, maxBytes: Infinity })).checkpoints;
      expect(history.map((c) => c.seq_num)).toEqual([3, 2, 1]);
      expect(((await store.sessions.listCheckpoints(T, id, { limit: 1, offset: 1, maxBytes: Infinity })).checkpoints).map((c) => c.seq_num)).toEqual([2]);
    });

    it('applies a patch of more keys than a script writes at once (PATCH_BATCH), and undoes it in history', async () => {
      const store = await makeStore();
      const id = await sessionWithCheckpoint(store);
      // 1,201 keys: three batches of 500 on Redis, one of them partial; some keys replace old ones.
      const patch: Record<string, unknown> = { a: 'replaced' };
      for (let i = 0; i < 1_200; i += 1) patch[`k${i}`] = i % 3 === 0 ? { i } : i;
      const second = await store.sessions.appendCheckpoint(T, id, { patch });
      expect(second.seq_num).toBe(2);
      const state = (await store.sessions.getCheckpoint(T, id))!.state;
      expect(Object.keys(state)).toHaveLength(1_202);
      expect(state).toMatchObject({ a: 'replaced', nested: { x: 1 }, k0: { i: 0 }, k1: 1, k499: 499, k500: 500, k1199: 1199 });
      expect((await store.sessions.getCheckpoint(T, id, 1))!.state).toEqual({ a: 1, nested: { x: 1 } });
    });

    it('keeps unicode keys and values intact', async () => {
      const store = await makeStore();
      const id = await sessionWithCheckpoint(store);
      const patch = { 'ключ "q"': 'värde\n\u2028😀', 'a/b': '</script>' };
      const cp = await store.sessions.appendCheckpoint(T, id, { patch });
      expect((await store.sessions.getCheckpoint(T, id, cp.seq_num))!.state).toMatchObject(patch);
      expect((await store.sessions.getCheckpoint(T, id))!.state).toMatchObject(patch);
    });

    it('refuses a checkpoint write for a missing session, another tenant, or without any node', async () => {
      const store = await makeStore();
      const id = await sessionWithCheckpoint(store);
      await expect(store.sessions.appendCheckpoint(T, 'nope', { patch: {} })).rejects.toMatchObject({ code: 'not_found' });
      await expect(store.sessions.appendCheckpoint(OTHER, id, { patch: {} })).rejects.toMatchObject({ code: 'not_found' });
      const bare = randomUUID();
      await store.runs.createRun(T, { run_id: randomUUID(), session_id: bare, agent_id: 'echo' });
      await expect(store.sessions.appendCheckpoint(T, bare, { patch: {} })).rejects.toMatchObject({ code: 'not_found' });
      expect(await store.sessions.getCheckpoint(T, bare)).toBeNull();
      expect(await store.sessions.getCheckpoint(OTHER, id)).toBeNull();
    });

    it('applies ifSeq as a precondition and rejects while running', async () => {
      const store = await makeStore();
      const id = randomUUID();
      const run = await store.runs.createRun(T, { run_id: randomUUID(), session_id: id, agent_id: 'echo' });
      await store.sessions.appendCheckpoint(T, id, { patch: {}, node_id: 'receive' });
      await expect(store.sessions.appendCheckpoint(T, id, { patch: { x: 1 }, ifSeq: 2 })).rejects.toMatchObject({
        code: 'precondition_failed',
      });
      expect((await store.sessions.appendCheckpoint(T, id, { patch: { x: 1 }, ifSeq: 1 })).seq_num).toBe(2);
      await store.runs.updateRun(T, run.id, { status: 'running' });
      await expect(store.sessions.appendCheckpoint(T, id, { patch: { y: 1 }, rejectWhileRunning: true })).rejects.toMatchObject({
        code: 'conflict',
      });
      expect((await store.sessions.appendCheckpoint(T, id, { patch: { y: 1 } })).seq_num).toBe(3);
      expect(((await store.sessions.listCheckpoints(T, id, { limit: 50, offset: 0, maxBytes: Infinity })).checkpoints).length).toBe(3);
    });

    it('keeps 50 concurrent patches of distinct keys, with distinct consecutive seq_nums', async () => {
      const store = await makeStore();
      const id = await sessionWithCheckpoint(store);
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => store.sessions.appendCheckpoint(T, id, { patch: { [`k${i}`]: i } })),
      );
      expect(results.map((c) => c.seq_num).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 2));
      const latest = (await store.sessions.getCheckpoint(T, id))!;
      expect(latest.seq_num).toBe(51);
      for (let i = 0; i < 50; i += 1) expect(latest.state[`k${i}`]).toBe(i);
      expect(latest.state.a).toBe(1);
    });

    it('stores spans and lists them ordered by start', async () => {
      const store = await makeStore();
      const id = await sessionWithCheckpoint(store);
      const span = (spanId: string, start: string, parent = ''): Span => ({
        span_id: spanId,
        parent_id: parent,
        name: spanId,
        start,
        end: start,
        attributes: { k: 'v' },
      });
      await store.sessions.addSpan(T, id, span('b', '2026-01-01T00:00:02.000Z', 'a'));
      await store.sessions.addSpan(T, id, span('a', '2026-01-01T00:00:01.000Z'));
      expect((await store.sessions.listSpans(T, id, ALL)).map((s) => s.span_id)).toEqual(['a', 'b']);
      expect(await store.sessions.listSpans(OTHER, id, ALL)).toEqual([]);
    });

    it('allows one active run per session and tracks run status', async () => {
      const store = await makeStore();
      const id = randomUUID();
      const first = await store.runs.createRun(T, { run_id: randomUUID(), session_id: id, agent_id: 'echo' });
      expect(first).toMatchObject({ status: 'queued', session_id: id, agent_id: 'echo' });
      await expect(store.runs.createRun(T, { run_id: randomUUID(), session_id: id, agent_id: 'echo' })).rejects.toMatchObject({
        code: 'conflict',
      });
      await store.runs.updateRun(T, first.id, { status: 'failed', error: 'boom' });
      expect(await store.runs.getRun(T, first.id)).toMatchObject({ status: 'failed', error: 'boom' });
      await expect(store.runs.createRun(T, { run_id: randomUUID(), session_id: id, agent_id: 'other' })).rejects.toMatchObject({
        code: 'conflict',
      });
      const second = await store.runs.createRun(T, { run_id: randomUUID(), session_id: id, agent_id: 'echo' });
      expect((await store.runs.listRuns(T, id, ALL)).map((r) => r.id)).toEqual([second.id, first.id]);
      expect((await store.runs.latestRun(T, id))!.id).toBe(second.id);
      expect(await store.runs.getRun(OTHER, first.id)).toBeNull();
      await expect(store.runs.updateRun(OTHER, first.id, { status: 'completed' })).rejects.toMatchObject({ code: 'not_found' });
      await expect(store.runs.updateRun(T, second.id, { status: 'queued', from: ['interrupted'] })).rejects.toMatchObject({ code: 'conflict' });
      await store.runs.updateRun(T, second.id, { status: 'interrupted' });
      expect((await store.runs.updateRun(T, second.id, { status: 'queued', from: ['interrupted'] })).status).toBe('queued');
      const updated = await store.runs.updateRun(T, second.id, { status: 'completed' });
      expect(updated.error).toBeUndefined();
    });

    it('creates the first checkpoint with the run, atomically', async () => {
      const store = await makeStore();
      const id = randomUUID();
      await store.runs.createRun(T, { run_id: randomUUID(), session_id: id, agent_id: 'echo', start: { node_id: 'receive', input: { q: 1 } } });
      expect(await store.sessions.getCheckpoint(T, id)).toMatchObject({ seq_num: 1, node_id: 'receive', state: { q: 1 } });
      await expect(
        store.runs.createRun(T, { run_id: randomUUID(), session_id: id, agent_id: 'echo', start: { node_id: 'receive', input: { q: 2 } } }),
      ).rejects.toMatchObject({ code: 'conflict' });
      expect((await store.sessions.getCheckpoint(T, id))!.seq_num).toBe(1);
      const [run] = await store.runs.listRuns(T, id, ALL);
      await store.runs.updateRun(T, run!.id, { status: 'completed' });
      await store.runs.createRun(T, { run_id: randomUUID(), session_id: id, agent_id: 'echo', start: { node_id: 'receive', input: { r: 2 } } });
      expect(await store.sessions.getCheckpoint(T, id)).toMatchObject({ seq_num: 2, node_id: 'receive', state: { q: 1, r: 2 } });
    });

    it('interrupts a run with its approval and queues it again with the decision', async () => {
      const store = await makeStore();
      const id = randomUUID();
      const run = await store.runs.createRun(T, { run_id: randomUUID(), session_id: id, agent_id: 'human-review' });
      await store.runs.updateRun(T, run.id, { status: 'running' });
      const approval = await store.approvals.createApproval(T, {
        id: randomUUID(),
        session_id: id,
        run_id: run.id,
        agent_id: 'human-review',
        node_id: 'review',
        prompt: 'Publish the draft?',
        requested_at: new Date().toISOString(),
      });
      expect((await store.runs.getRun(T, run.id))!.status).toBe('interrupted');
      await expect(store.runs.createRun(T, { run_id: randomUUID(), session_id: id, agent_id: 'human-review' })).rejects.toMatchObject({
        code: 'conflict',
      });
      const decided = await store.approvals.decideApproval(T, approval.id, { approved: false, comment: 'no', decided_by: 'alice' });
      expect(decided).toMatchObject({ status: 'rejected', comment: 'no', decided_by: 'alice' });
      expect((await store.runs.getRun(T, run.id))!.status).toBe('queued');
    });

    it("keeps a request's payload and a decision's resume as JSON, each refused past 64 KiB with nothing written", async () => {
      const store = await makeStore();
      const sessionId = randomUUID();
      const run = await store.runs.createRun(T, { run_id: randomUUID(), session_id: sessionId, agent_id: 'human-review' });
      await store.runs.updateRun(T, run.id, { status: 'running' });
      const base = { session_id: sessionId, run_id: run.id, agent_id: 'human-review', node_id: 'review', prompt: 'Run it?', requested_at: new Date().toISOString() };
      // Bytes, not characters: 2 quotes and 2-byte characters up to exactly the limit, then one more.
      const atLimit = 'é'.repeat((MAX_APPROVAL_JSON_BYTES - 2) / 2);
      const tooBig = await store.approvals.createApproval(T, { ...base, id: randomUUID(), payload: `${atLimit}x` }).catch((error: unknown) => error);
      expect(tooBig).toMatchObject({ code: 'payload_too_large' });
      expect(await store.approvals.listPendingApprovals(T, ALL)).toEqual([]);
      expect((await store.runs.getRun(T, run.id))!.status).toBe('running');

      const payload = { question: 'Run get_weather?', args: { city: 'Paris' }, list: [1, 2.5, null, true, ''], dropped: undefined };
      const approval = await store.approvals.createApproval(T, { ...base, id: randomUUID(), payload });
      const kept = { question: 'Run get_weather?', args: { city: 'Paris' }, list: [1, 2.5, null, true, ''] };
      expect(approval).toMatchObject({ status: 'pending', payload: kept });
      expect(approval.payload).not.toHaveProperty('dropped');
      payload.args.city = 'Rome';
      (approval.payload as typeof kept).args.city = 'Oslo';
      expect((await store.approvals.getApproval(T, approval.id))!.payload).toEqual(kept);
      expect(await store.approvals.listPendingApprovals(T, ALL)).toEqual([{ ...approval, payload: kept }]);
      expect(approval).not.toHaveProperty('resume');

      const refused = await store.approvals.decideApproval(T, approval.id, { approved: true, resume: [`${atLimit}x`], decided_by: 'alice' }).catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: 'payload_too_large' });
      expect((await store.approvals.getApproval(T, approval.id))!.status).toBe('pending');
      expect((await store.runs.getRun(T, run.id))!.status).toBe('interrupted');

      const decided = await store.approvals.decideApproval(T, approval.id, { approved: true, resume: { action: 'edit', args: { city: 'Lyon' } }, decided_by: 'alice' });
      expect(decided).toMatchObject({ status: 'approved', payload: kept, resume: { action: 'edit', args: { city: 'Lyon' } }, decided_by: 'alice' });
      expect(await store.approvals.getApproval(T, approval.id)).toEqual(decided);
      expect((await store.approvals.listDecidedApprovals(T, ALL)).find((a) => a.id === approval.id)).toEqual(decided);
      expect((await store.runs.getRun(T, run.id))!.status).toBe('queued');

      // A payload of exactly the limit, falsy answers, and a decision without one.
      await store.runs.updateRun(T, run.id, { status: 'running' });
      const large = await store.approvals.createApproval(T, { ...base, id: randomUUID(), payload: atLimit });
      expect((await store.approvals.getApproval(T, large.id))!.payload).toBe(atLimit);
      expect(await store.approvals.decideApproval(T, large.id, { approved: false, resume: 0, decided_by: 'bob' })).toMatchObject({ status: 'rejected', resume: 0 });
      for (const resume of [false, '', null]) {
        await store.runs.updateRun(T, run.id, { status: 'running' });
        const asked = await store.approvals.createApproval(T, { ...base, id: randomUUID() });
        expect(asked).not.toHaveProperty('payload');
        expect(await store.approvals.decideApproval(T, asked.id, { approved: true, resume, decided_by: 'bob' })).toMatchObject({ resume });
      }
      await store.runs.updateRun(T, run.id, { status: 'running' });
      const plain = await store.approvals.createApproval(T, { ...base, id: randomUUID() });
      expect(await store.approvals.decideApproval(T, plain.id, { approved: true, decided_by: 'bob' })).not.toHaveProperty('resume');
    });

    it('decides an approval exactly once, oldest pending first', async () => {
      const store = await makeStore();
      const base = { session_id: 's', node_id: 'review', prompt: 'Publish?', run_id: 'r', agent_id: 'human-review' };
      const before = await store.approvals.countPendingApprovals();
      const a = await store.approvals.createApproval(T, { ...base, id: randomUUID(), requested_at: '2026-01-01T00:00:01.000Z' });
      const b = await store.approvals.createApproval(T, { ...base, id: randomUUID(), requested_at: '2026-01-01T00:00:02.000Z' });
      await store.approvals.createApproval(T, { ...base, id: a.id, requested_at: '2026-01-01T00:00:03.000Z' });
      expect(a.status).toBe('pending');
      expect((await store.approvals.listPendingApprovals(T, ALL)).map((x) => x.id)).toEqual([a.id, b.id]);
      expect(await store.approvals.countPendingApprovals()).toBe(before + 2);
      expect(await store.approvals.listPendingApprovals(OTHER, ALL)).toEqual([]);
      await expect(store.approvals.decideApproval(OTHER, a.id, { approved: true, decided_by: 'x' })).rejects.toMatchObject({
        code: 'not_found',
      });
      const answers = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) => store.approvals.decideApproval(T, a.id, { approved: i % 2 === 0, comment: `c${i}`, decided_by: 'u' })),
      );
      expect(answers.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const decided = (await store.approvals.getApproval(T, a.id))!;
      expect(decided.status).toMatch(/approved|rejected/);
      expect(decided.decided_by).toBe('u');
      expect((await store.approvals.listPendingApprovals(T, ALL)).map((x) => x.id)).toEqual([b.id]);
      expect(await store.approvals.countPendingApprovals()).toBe(before + 1);
      await expect(store.approvals.decideApproval(T, 'missing', { approved: true, decided_by: 'u' })).rejects.toMatchObject({
        code: 'not_found',
      });
    });
  });
}
