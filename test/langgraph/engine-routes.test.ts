import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Annotation, END, START, StateGraph, interrupt, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { brief } from '../support/events.js';
import { graphAgent } from '../support/langgraph.js';
import { waitFor } from '../support/wait.js';
import { BACKENDS, useGraphApi } from './graph-api.js';

const concat = <T>() => Annotation<T[]>({ reducer: (a, b) => a.concat(b), default: () => [] });

/** Two nodes in a row, each appending its name. */
const steps = new StateGraph(Annotation.Root({ steps: concat<string>() }))
  .addNode('first', () => ({ steps: ['first'] }))
  .addNode('second', () => ({ steps: ['second'] }))
  .addEdge(START, 'first')
  .addEdge('first', 'second')
  .addEdge('second', END)
  .compile();

/** Pauses at `ask`; after it, `tally` copies the length of the list channel `items` into `count`. */
const ask = new StateGraph(Annotation.Root({ items: concat<string>(), count: Annotation<number> }))
  .addNode('ask', () => {
    interrupt('Continue?');
    return {};
  })
  .addNode('tally', (state) => ({ count: state.items.length }))
  .addEdge(START, 'ask')
  .addEdge('ask', 'tally')
  .addEdge('tally', END)
  .compile();

/** A node that waits until the test lets it go (`held`: the release of the node under way). */
let held: (() => void) | undefined;
const hold = new StateGraph(Annotation.Root({ done: Annotation<boolean> }))
  .addNode('hold', async () => {
    await new Promise<void>((resolve) => (held = resolve));
    return { done: true };
  })
  .addEdge(START, 'hold')
  .addEdge('hold', END)
  .compile();

/** Calls of `prepare` and `flaky` per session (thread); `flaky` fails on its first call only. */
const calls = new Map<string, { prepare: number; flaky: number }>();
const callsOf = (config: LangGraphRunnableConfig) => {
  const thread = String(config.configurable?.thread_id);
  if (!calls.has(thread)) calls.set(thread, { prepare: 0, flaky: 0 });
  return calls.get(thread)!;
};
const flaky = new StateGraph(Annotation.Root({ log: concat<string>() }))
  .addNode('prepare', (_state, config) => {
    callsOf(config).prepare += 1;
    return { log: ['prepare'] };
  })
  .addNode('flaky', (_state, config) => {
    callsOf(config).flaky += 1;
    if (callsOf(config).flaky === 1) throw new Error('flaky failed on its first call');
    return { log: ['flaky'] };
  })
  .addEdge(START, 'prepare')
  .addEdge('prepare', 'flaky')
  .addEdge('flaky', END)
  .compile();

const agents = () => [
  graphAgent('lg-steps', steps, ['first', 'second']),
  graphAgent('lg-ask', ask, ['ask', 'tally']),
  graphAgent('lg-hold', hold, ['hold']),
  graphAgent('lg-flaky', flaky, ['prepare', 'flaky']),
];

describe.each(BACKENDS)('every route answers a LangGraph session (%s)', (backend) => {
  const api = useGraphApi(backend, agents);
  const newSession = () => `lg-${randomUUID()}`;
  /** Starts a run and waits until it stops. */
  const runWait = async (agent_id: string, input: unknown, session_id = newSession()) => {
    const { status, body } = await api.post('/api/runs/wait', { agent_id, input, session_id });
    expect(status, JSON.stringify(body)).toBe(200);
    return body;
  };
  const stateOf = (sessionId: string) => api.get(`/api/sessions/state?session_id=${sessionId}`);

  it('sessions, state, history, traces, runs, approvals and events of a completed and an interrupted session', async () => {
    const done = await runWait('lg-steps', { steps: ['input'] });
    const paused = await runWait('lg-ask', { items: ['a'] });
    expect(done).toMatchObject({ status: 'completed', agent_id: 'lg-steps', state: { steps: ['input', 'first', 'second'] } });
    expect(paused).toMatchObject({ status: 'interrupted', agent_id: 'lg-ask', approval: { prompt: 'Continue?', node_id: 'ask' } });

    // Sessions: listed, filtered by agent, found by id.
    const listed = (await api.get('/api/sessions?limit=500')).body.sessions.map((s: any) => [s.id, s.agent_id]);
    expect(listed).toEqual(expect.arrayContaining([[done.session_id, 'lg-steps'], [paused.session_id, 'lg-ask']]));
    const byAgent = (await api.get('/api/sessions?agent_id=lg-ask&limit=500')).body.sessions.map((s: any) => s.id);
    expect(byAgent).toContain(paused.session_id);
    expect(byAgent).not.toContain(done.session_id);
    expect((await api.get(`/api/sessions?session_id=${done.session_id}`)).body.sessions).toMatchObject([{ id: done.session_id, agent_id: 'lg-steps' }]);

    // State: the graph's values, the next node (or __end__), ETag = seq_num.
    const doneState = await stateOf(done.session_id);
    expect(doneState.body).toMatchObject({ session_id: done.session_id, node_id: '__end__', state: { steps: ['input', 'first', 'second'] } });
    expect(doneState.headers.get('etag')).toBe(`"${doneState.body.seq_num}"`);
    expect((await stateOf(paused.session_id)).body).toMatchObject({ node_id: 'ask', state: { items: ['a'] } });

    // History: the run's first checkpoint at __start__, then one per superstep, seq_num 1..n.
    const history = (await api.get(`/api/sessions/history?session_id=${done.session_id}`)).body.checkpoints;
    expect(history.map((c: any) => [c.seq_num, c.node_id, c.state])).toEqual([
      [4, '__end__', { steps: ['input', 'first', 'second'] }],
      [3, 'second', { steps: ['input', 'first'] }],
      [2, 'first', { steps: ['input'] }],
      [1, '__start__', {}],
    ]);
    expect(doneState.body.seq_num).toBe(4);

    // Traces: one span per task under the run's root span; the interrupted task says so.
    const spans = (await api.get(`/api/traces?session_id=${done.session_id}`)).body.traces;
    expect(spans.map((s: any) => [s.name, s.parent_id, s.attributes.status])).toEqual([
      ['run lg-steps', '', 'completed'],
      ['first', done.id, 'ok'],
      ['second', done.id, 'ok'],
    ]);
    expect(spans[0].span_id).toBe(done.id);
    const pausedSpans = (await api.get(`/api/traces?session_id=${paused.session_id}`)).body.traces;
    expect(pausedSpans.map((s: any) => [s.name, s.attributes.status])).toEqual([['ask', 'interrupted']]);

    // Runs: listed per session and by status and agent; one by id.
    expect((await api.get(`/api/runs?session_id=${done.session_id}`)).body.runs).toMatchObject([{ id: done.id, status: 'completed', agent_id: 'lg-steps' }]);
    const interrupted = (await api.get('/api/runs?status=interrupted&agent_id=lg-ask&limit=500')).body.runs.map((r: any) => r.id);
    expect(interrupted).toContain(paused.id);
    expect((await api.get('/api/runs?status=interrupted&agent_id=lg-steps&limit=500')).body.runs).toEqual([]);
    expect((await api.get(`/api/runs/${paused.id}`)).body).toMatchObject({ id: paused.id, session_id: paused.session_id, status: 'interrupted', approval_id: paused.approval.id });

    // Approvals: the interrupt is pending in both lists.
    const approval = { id: paused.approval.id, run_id: paused.id, session_id: paused.session_id, agent_id: 'lg-ask', node_id: 'ask', prompt: 'Continue?', status: 'pending' };
    expect((await api.get('/api/approval/pending?limit=500')).body.pending).toEqual(expect.arrayContaining([expect.objectContaining(approval)]));
    expect((await api.get('/api/approvals?status=pending&limit=500')).body.approvals).toEqual(expect.arrayContaining([expect.objectContaining(approval)]));
    expect((await api.get(`/api/approvals/${paused.approval.id}`)).body).toMatchObject({ ...approval, payload: 'Continue?' });

    // Events: replayed from the stream with Last-Event-ID, in order, every one of the run.
    const events = await api.replay(done.session_id, (e) => e.type === 'completed');
    expect(events.map((r) => brief(r.event))).toEqual(['node_start:first', 'node_end:first:ok', 'node_start:second', 'node_end:second:ok', 'completed']);
    expect(events.every((r) => r.event.run_id === done.id && r.event.agent_id === 'lg-steps' && r.event.session === done.session_id)).toBe(true);
    const after = await api.replay(done.session_id, (e) => e.type === 'completed', events[1]!.id);
    expect(after.map((r) => r.id)).toEqual(events.slice(2).map((r) => r.id));
    expect((await api.replay(paused.session_id, (e) => e.type === 'interrupted')).map((r) => brief(r.event))).toEqual(['node_start:ask', 'interrupted:ask']);
  });

  it('DELETE /api/sessions: 409 while interrupted; deleted, its graph checkpoints go with it and a new run on the id starts empty', async () => {
    const paused = await runWait('lg-ask', { items: ['a'] });
    expect((await api.get(`/api/sessions?session_id=${paused.session_id}`)).body.sessions).toHaveLength(1);
    const refused = await api.del(`/api/sessions?session_id=${paused.session_id}`);
    expect(refused.status).toBe(409);

    const done = await runWait('lg-steps', { steps: ['one'] });
    const deleted = await api.del(`/api/sessions?session_id=${done.session_id}`);
    expect(deleted).toMatchObject({ status: 200, body: { session_id: done.session_id, status: 'deleted' } });
    expect((await stateOf(done.session_id)).status).toBe(404);
    expect((await api.get(`/api/sessions/history?session_id=${done.session_id}`)).status).toBe(404);
    expect((await api.get(`/api/traces?session_id=${done.session_id}`)).status).toBe(404);
    expect((await api.get(`/api/runs/${done.id}`)).status).toBe(404);

    const again = await runWait('lg-steps', { steps: ['two'] }, done.session_id);
    expect(again).toMatchObject({ status: 'completed', state: { steps: ['two', 'first', 'second'] } });
    const history = (await api.get(`/api/sessions/history?session_id=${done.session_id}`)).body.checkpoints;
    expect(history.map((c: any) => c.seq_num)).toEqual([4, 3, 2, 1]);
  });

  it('POST /api/sessions/resume after a failed run continues from the last checkpoint: the failed node again, not the ones before', async () => {
    const failed = await runWait('lg-flaky', {});
    expect(failed).toMatchObject({ status: 'failed', error: 'flaky failed on its first call' });
    const ended = await api.replay(failed.session_id, (e) => e.type === 'failed');

    const resumed = await api.post(`/api/sessions/resume?session_id=${failed.session_id}`);
    expect(resumed.status).toBe(202);
    expect(resumed.body.run_id).not.toBe(failed.id);
    await api.runUntil(resumed.body.run_id, 'completed');
    expect((await stateOf(failed.session_id)).body).toMatchObject({ node_id: '__end__', state: { log: ['prepare', 'flaky'] } });
    expect(calls.get(failed.session_id)).toEqual({ prepare: 1, flaky: 2 });
    const events = await api.replay(failed.session_id, (e) => e.type === 'completed', ended.at(-1)!.id);
    expect(events.map((r) => brief(r.event))).toEqual(['node_start:flaky', 'node_end:flaky:ok', 'completed']);
    expect(events.every((r) => r.event.run_id === resumed.body.run_id)).toBe(true);
  });

  it('a failed run records its last checkpoint and the failing task\'s events', async () => {
    const failed = await runWait('lg-flaky', {});
    expect(failed).toMatchObject({ status: 'failed', error: 'flaky failed on its first call' });
    expect((await stateOf(failed.session_id)).body).toMatchObject({ node_id: 'flaky', state: { log: ['prepare'] } });
    const events = await api.replay(failed.session_id, (e) => e.type === 'failed');
    expect(events.map((r) => brief(r.event))).toEqual(['node_start:prepare', 'node_end:prepare:ok', 'node_start:flaky', 'node_end:flaky:error', 'failed']);
  });

  it('the failing task\'s span says error, with the node\'s message', async () => {
    const failed = await runWait('lg-flaky', {});
    expect(failed.status).toBe('failed');
    const spans = (await api.get(`/api/traces?session_id=${failed.session_id}`)).body.traces;
    expect(spans.find((s: any) => s.name === 'flaky')?.attributes).toMatchObject({ status: 'error', error: 'flaky failed on its first call' });
  });

  it('POST /api/sessions/state on a paused session appends to a list channel (its reducer)', async () => {
    const paused = await runWait('lg-ask', { items: ['a'] });
    const before = (await stateOf(paused.session_id)).body;
    const edited = await api.post(`/api/sessions/state?session_id=${paused.session_id}`, { state: { items: ['b', 'c'] } });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect(edited.body).toMatchObject({ session_id: paused.session_id, node_id: 'ask', seq_num: before.seq_num + 1, state: { items: ['a', 'b', 'c'] } });
    expect(edited.headers.get('etag')).toBe(`"${before.seq_num + 1}"`);
    expect((await stateOf(paused.session_id)).body).toEqual(edited.body);
    expect((await api.get(`/api/runs/${paused.id}`)).body).toMatchObject({ status: 'interrupted', approval_id: paused.approval.id });
  });

  it('the run resumed after a state edit sees the edit: answering its approval completes it', async () => {
    const paused = await runWait('lg-ask', { items: ['a'] });
    expect((await api.post(`/api/sessions/state?session_id=${paused.session_id}`, { state: { items: ['b', 'c'] } })).status).toBe(200);
    const answered = await api.post('/api/approval/respond', { id: paused.approval.id, approved: true, wait_ms: 10_000 });
    expect(answered.status).toBe(200);
    // Not interrupted again under a new approval id: the answer reaches the interrupt the edit kept waiting.
    expect(answered.body.run).toMatchObject({ id: paused.id, status: 'completed', state: { items: ['a', 'b', 'c'], count: 3 } });
  });

  it('POST /api/sessions/state: 412 when If-Match names another seq_num, 409 while a run is running; nothing changed', async () => {
    const paused = await runWait('lg-ask', { items: ['a'] });
    const before = (await stateOf(paused.session_id)).body;
    const stale = await api.post(`/api/sessions/state?session_id=${paused.session_id}`, { state: { items: ['x'] } }, { 'If-Match': `"${before.seq_num - 1}"` });
    expect(stale.status).toBe(412);
    expect(stale.body.error.code).toBe('precondition_failed');
    const matching = await api.post(`/api/sessions/state?session_id=${paused.session_id}`, { state: { items: ['y'] } }, { 'If-Match': `"${before.seq_num}"` });
    expect(matching.body).toMatchObject({ seq_num: before.seq_num + 1, state: { items: ['a', 'y'] } });

    const started = await api.post('/api/runs', { agent_id: 'lg-hold', input: {}, session_id: newSession() });
    expect(started.status).toBe(202);
    const release = await waitFor('the node to be under way', () => held);
    try {
      const running = await stateOf(started.body.session_id);
      const busy = await api.post(`/api/sessions/state?session_id=${started.body.session_id}`, { state: { done: false } });
      expect(busy.status).toBe(409);
      expect(busy.body.error.code).toBe('conflict');
      expect((await stateOf(started.body.session_id)).body).toEqual(running.body);
    } finally {
      held = undefined;
      release();
    }
    await api.runUntil(started.body.run_id, 'completed');
    expect((await stateOf(started.body.session_id)).body.state).toEqual({ done: true });
  });
});
