import { Annotation, END, interrupt, START, StateGraph, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TENANT } from '../../src/domain/types.js';
import { graphAgent } from '../support/langgraph.js';
import { waitFor } from '../support/wait.js';
import { BACKENDS, useGraphApi } from './graph-api.js';

/*
 * LangGraph sessions under the run lifecycle's multitask strategies, and the cross-thread store
 * given to graphs (`config.store`), on both backends.
 */

const Log = Annotation.Root({
  entries: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  word: Annotation<string>,
});

/** Holds each run in `hold` until the test releases it; appends the run's word. */
let release: (() => void) | undefined;
let held = 0;
const holder = new StateGraph(Log)
  .addNode('hold', async (state) => {
    held += 1;
    if (state.word === 'hold') await new Promise<void>((resolve) => (release = resolve));
    return { entries: [state.word] };
  })
  .addEdge(START, 'hold')
  .addEdge('hold', END)
  .compile();

/** Asks before it writes its word. */
const asker = new StateGraph(Log)
  .addNode('ask', (state) => {
    const answer = interrupt({ question: `write ${state.word}?` }) as { approved: boolean };
    return { entries: [answer.approved ? state.word : `not ${state.word}`] };
  })
  .addEdge(START, 'ask')
  .addEdge('ask', END)
  .compile();

const Memory = Annotation.Root({ user: Annotation<string>, seen: Annotation<number> });
/** Counts visits per user in the store: the count survives across sessions (threads). */
const visits = new StateGraph(Memory)
  .addNode('visit', async (state, config: LangGraphRunnableConfig) => {
    const store = config.store!;
    const namespace = ['visits', state.user];
    const before = ((await store.get(namespace, 'count'))?.value.count as number | undefined) ?? 0;
    await store.put(namespace, 'count', { count: before + 1 });
    return { seen: before + 1 };
  })
  .addEdge(START, 'visit')
  .addEdge('visit', END)
  .compile();

describe.each(BACKENDS)('LangGraph sessions and multitask, the store (%s)', (backend) => {
  const api = useGraphApi(backend, () => [graphAgent('lg-hold', holder, ['hold']), graphAgent('lg-ask', asker, ['ask']), graphAgent('lg-visits', visits, ['visit'])]);

  const start = async (body: Record<string, unknown>) => {
    const { status, body: run } = await api.post('/api/runs', body);
    expect(status, JSON.stringify(run)).toBe(202);
    return run as { run_id: string; session_id: string };
  };
  const valuesOf = async (sessionId: string) => (await api.get(`/api/sessions/state?session_id=${sessionId}`)).body.state;

  it('enqueue: a run queued behind a running one runs after it, with its own input, on the graph state the first left', async () => {
    const before = held;
    const first = await start({ agent_id: 'lg-hold', input: { word: 'hold' } });
    await waitFor('the first run held in its node', () => held > before && release !== undefined);
    const second = await start({ agent_id: 'lg-hold', session_id: first.session_id, input: { word: 'two' }, multitask: 'enqueue' });
    expect((await api.get(`/api/runs/${second.run_id}`)).body.status).toBe('queued');
    // Without a strategy the busy session refuses.
    expect((await api.post('/api/runs', { agent_id: 'lg-hold', session_id: first.session_id, input: { word: 'x' } })).status).toBe(409);
    release!();
    release = undefined;
    await api.runUntil(first.run_id, 'completed');
    await api.runUntil(second.run_id, 'completed');
    expect(await valuesOf(first.session_id)).toEqual({ entries: ['hold', 'two'], word: 'two' });
  });

  it('interrupt: a new run cancels the running one (its node\'s work discarded) and runs on the state before it', async () => {
    const before = held;
    const first = await start({ agent_id: 'lg-hold', input: { word: 'hold' } });
    await waitFor('the first run held in its node', () => held > before && release !== undefined);
    const second = await start({ agent_id: 'lg-hold', session_id: first.session_id, input: { word: 'next' }, multitask: 'interrupt' });
    const cancelled = await api.runUntil(first.run_id, 'cancelled');
    expect(cancelled.error).toMatch(/multitask: interrupt/);
    await api.runUntil(second.run_id, 'completed');
    release?.();
    release = undefined;
    // The cancelled run's node never wrote: only the second run's word is in the list.
    expect(await valuesOf(first.session_id)).toEqual({ entries: ['next'], word: 'next' });
  });

  it('interrupt on a paused graph session: the pending approval is closed and the new run completes', async () => {
    const first = await start({ agent_id: 'lg-ask', input: { word: 'a' } });
    await api.runUntil(first.run_id, 'interrupted');
    const [approval] = await api.pendingOf(first.run_id);
    const second = await start({ agent_id: 'lg-ask', session_id: first.session_id, input: { word: 'b' }, multitask: 'interrupt' });
    await api.runUntil(first.run_id, 'cancelled');
    expect((await api.get(`/api/approvals/${approval.id}`)).body.status).toBe('cancelled');
    await api.runUntil(second.run_id, 'interrupted');
    const [next] = await api.pendingOf(second.run_id);
    expect(next.prompt).toBe('write b?');
    expect((await api.post('/api/approval/respond', { id: next.id, approved: true })).status).toBe(200);
    await api.runUntil(second.run_id, 'completed');
    expect((await valuesOf(first.session_id)).entries).toEqual(['b']);
  });

  it('enqueue behind a paused graph run: the queued run starts once the pause is answered and the first completes', async () => {
    const first = await start({ agent_id: 'lg-ask', input: { word: 'first' } });
    await api.runUntil(first.run_id, 'interrupted');
    const second = await start({ agent_id: 'lg-ask', session_id: first.session_id, input: { word: 'second' }, multitask: 'enqueue' });
    const [approval] = await api.pendingOf(first.run_id);
    await api.post('/api/approval/respond', { id: approval.id, approved: false });
    await api.runUntil(first.run_id, 'completed');
    await api.runUntil(second.run_id, 'interrupted');
    const [asked] = await api.pendingOf(second.run_id);
    expect(asked.prompt).toBe('write second?');
    await api.post('/api/approval/respond', { id: asked.id, approved: true });
    await api.runUntil(second.run_id, 'completed');
    expect((await valuesOf(first.session_id)).entries).toEqual(['not first', 'second']);
  });

  it("config.store: a graph's memory is shared across its sessions (threads) and readable by the next run", async () => {
    const user = `u-${Date.now()}-${Math.random().toString(36).slice(2)}`;
    const wait = async (sessionId?: string) => {
      const { status, body } = await api.post('/api/runs/wait', { agent_id: 'lg-visits', input: { user }, ...(sessionId ? { session_id: sessionId } : {}) });
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body.status, JSON.stringify(body)).toBe('completed');
      return body as { session_id: string; state: { seen: number } };
    };
    const one = await wait();
    const two = await wait();
    const again = await wait(one.session_id);
    expect([one.state.seen, two.state.seen, again.state.seen]).toEqual([1, 2, 3]);
    expect(two.session_id).not.toBe(one.session_id);
    // Stored in the backend's LangGraph memory, under the run's tenant.
    const item = await api.app.backend.graphItems.getItem(DEFAULT_TENANT, ['visits', user], 'count');
    expect(item && JSON.parse(item.value)).toEqual({ count: 3 });
  });
});
