import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Annotation, END, START, StateGraph, interrupt } from '@langchain/langgraph';
import { brief } from '../support/events.js';
import { graphAgent } from '../support/langgraph.js';
import { waitFor } from '../support/wait.js';
import { BACKENDS, useGraphApi } from './graph-api.js';

/** What `interrupt()` returns when the approval is answered yes/no. */
interface Answer {
  approved: boolean;
  comment: string;
}

const concat = <T>() => Annotation<T[]>({ reducer: (a, b) => a.concat(b), default: () => [] });

/** A yes/no question, then one of two paths: `ship` when approved, `drop` when not. */
const decide = new StateGraph(Annotation.Root({ approved: Annotation<boolean>, comment: Annotation<string>, outcome: Annotation<string> }))
  .addNode('ask', () => {
    const answer = interrupt({ question: 'Ship it?' }) as Answer;
    return { approved: answer.approved, comment: answer.comment };
  })
  .addNode('ship', () => ({ outcome: 'shipped' }))
  .addNode('drop', () => ({ outcome: 'dropped' }))
  .addEdge(START, 'ask')
  .addConditionalEdges('ask', (state) => (state.approved ? 'ship' : 'drop'), ['ship', 'drop'])
  .addEdge('ship', END)
  .addEdge('drop', END)
  .compile();

/** An interrupt answered with any JSON: the node keeps what it got. */
const choose = new StateGraph(Annotation.Root({ choice: Annotation<unknown> }))
  .addNode('pick', () => ({ choice: interrupt({ prompt: 'Pick a city', options: ['Paris', 'Oslo'] }) }))
  .addEdge(START, 'pick')
  .addEdge('pick', END)
  .compile();

/** Two interrupts in one node, asked one after the other; the node returns both answers. */
const twice = new StateGraph(Annotation.Root({ answers: concat<unknown>() }))
  .addNode('review', () => {
    const first = interrupt('First check?');
    const second = interrupt('Second check?');
    return { answers: [first, second] };
  })
  .addEdge(START, 'review')
  .addEdge('review', END)
  .compile();

/** Two parallel tasks that each interrupt; a join after both. */
const parallel = new StateGraph(Annotation.Root({ answers: concat<string>(), joined: Annotation<number> }))
  .addNode('left', () => {
    const answer = interrupt({ question: 'Left?' }) as Answer;
    return { answers: [`left:${answer.approved}:${answer.comment}`] };
  })
  .addNode('right', () => {
    const answer = interrupt({ question: 'Right?' }) as Answer;
    return { answers: [`right:${answer.approved}:${answer.comment}`] };
  })
  .addNode('join', (state) => ({ joined: state.answers.length }))
  .addEdge(START, 'left')
  .addEdge(START, 'right')
  .addEdge(['left', 'right'], 'join')
  .addEdge('join', END)
  .compile();

/** An interrupt that expires after 300 ms, approved by the system then. */
const expiring = new StateGraph(Annotation.Root({ answer: Annotation<Answer> }))
  .addNode('wait', () => ({ answer: interrupt({ question: 'Anyone?', expires_in_ms: 300, on_timeout: 'approve' }) as Answer }))
  .addEdge(START, 'wait')
  .addEdge('wait', END)
  .compile();

const agents = () => [
  graphAgent('lg-decide', decide, ['ask', 'ship', 'drop']),
  graphAgent('lg-choose', choose, ['pick']),
  graphAgent('lg-twice', twice, ['review']),
  graphAgent('lg-parallel', parallel, ['left', 'right', 'join']),
  graphAgent('lg-expiring', expiring, ['wait']),
];

describe.each(BACKENDS)('interrupts of a LangGraph run are approvals (%s)', (backend) => {
  const api = useGraphApi(backend, agents);
  /** Starts a run of `agent_id` on a new session and waits until it stops (here: interrupted). */
  const start = async (agent_id: string, input: unknown = {}) => {
    const session_id = `lg-${randomUUID()}`;
    const { status, body } = await api.post('/api/runs/wait', { agent_id, input, session_id });
    expect(status).toBe(200);
    return body;
  };
  const respond = async (json: Record<string, unknown>) => {
    const { status, body } = await api.post('/api/approval/respond', json);
    expect(status, JSON.stringify(body)).toBe(200);
    return body;
  };
  const stateOf = async (sessionId: string) => (await api.get(`/api/sessions/state?session_id=${sessionId}`)).body;

  it('a yes/no interrupt: approved takes one path, rejected the other; interrupt() returns {approved, comment}', async () => {
    const yes = await start('lg-decide');
    const no = await start('lg-decide');
    for (const run of [yes, no]) {
      expect(run).toMatchObject({ status: 'interrupted', approval: { prompt: 'Ship it?', node_id: 'ask', payload: { question: 'Ship it?' } } });
      expect(run.approval.id.startsWith(`${run.id}.`)).toBe(true);
      expect(await api.pendingOf(run.id)).toMatchObject([{ id: run.approval.id, session_id: run.session_id, agent_id: 'lg-decide', status: 'pending' }]);
    }
    expect(await respond({ id: yes.approval.id, approved: true, comment: 'go' })).toEqual({ id: yes.approval.id, status: 'approved' });
    expect(await respond({ id: no.approval.id, approved: false, comment: 'not now' })).toEqual({ id: no.approval.id, status: 'rejected' });
    await api.runUntil(yes.id, 'completed');
    await api.runUntil(no.id, 'completed');

    expect((await stateOf(yes.session_id)).state).toEqual({ approved: true, comment: 'go', outcome: 'shipped' });
    expect((await stateOf(no.session_id)).state).toEqual({ approved: false, comment: 'not now', outcome: 'dropped' });
    expect((await api.get(`/api/approvals/${no.approval.id}`)).body).toMatchObject({ status: 'rejected', comment: 'not now', decided_by: expect.any(String) });
    const decided = (await api.get('/api/approvals?status=decided&limit=500')).body.approvals.map((a: any) => [a.id, a.status]);
    expect(decided).toEqual(expect.arrayContaining([[yes.approval.id, 'approved'], [no.approval.id, 'rejected']]));
    const events = (await api.replay(yes.session_id, (e) => e.type === 'completed')).map((r) => brief(r.event));
    expect(events).toEqual(['node_start:ask', 'interrupted:ask', 'approval_decided', 'node_start:ask', 'node_end:ask:ok', 'node_start:ship', 'node_end:ship:ok', 'completed']);
    const dropped = (await api.replay(no.session_id, (e) => e.type === 'completed')).map((r) => brief(r.event));
    expect(dropped).toContain('node_end:drop:ok');
    expect(dropped).not.toContain('node_start:ship');
  });

  it('an interrupt answered with any JSON (resume): interrupt() returns exactly that value, and the approval records it', async () => {
    const run = await start('lg-choose');
    expect(run.approval).toMatchObject({ prompt: 'Pick a city', payload: { prompt: 'Pick a city', options: ['Paris', 'Oslo'] } });
    const resume = { city: 'Paris', nights: 2, tags: ['art', 1.5, null, { late: true }], note: 'é' };
    expect(await respond({ id: run.approval.id, resume })).toEqual({ id: run.approval.id, status: 'approved' });
    await api.runUntil(run.id, 'completed');
    expect((await stateOf(run.session_id)).state).toEqual({ choice: resume });
    expect((await api.get(`/api/approvals/${run.approval.id}`)).body).toMatchObject({ status: 'approved', resume });

    // A bare string works as well.
    const other = await start('lg-choose');
    await respond({ id: other.approval.id, resume: 'Oslo' });
    await api.runUntil(other.id, 'completed');
    expect((await stateOf(other.session_id)).state).toEqual({ choice: 'Oslo' });
  });

  it('two interrupts in one node are two approvals in turn; the node sees both answers', async () => {
    const run = await start('lg-twice');
    expect(run.approval).toMatchObject({ prompt: 'First check?', node_id: 'review', payload: 'First check?' });
    await respond({ id: run.approval.id, approved: true, comment: 'one' });

    const [second] = await waitFor('the second approval', async () => {
      const pending = await api.pendingOf(run.id);
      return pending.length === 1 && pending[0].id !== run.approval.id && pending;
    });
    expect(second).toMatchObject({ prompt: 'Second check?', node_id: 'review', status: 'pending' });
    expect((await api.get(`/api/runs/${run.id}`)).body).toMatchObject({ status: 'interrupted', approval_id: second.id });
    await respond({ id: second.id, approved: false, comment: 'two' });

    await api.runUntil(run.id, 'completed');
    expect((await stateOf(run.session_id)).state).toEqual({
      answers: [
        { approved: true, comment: 'one' },
        { approved: false, comment: 'two' },
      ],
    });
  });

  it('two parallel tasks each interrupting: two pending approvals; the run completes once both are answered', async () => {
    const run = await start('lg-parallel');
    expect(run.status).toBe('interrupted');
    const pending = await waitFor('two pending approvals', async () => {
      const found = await api.pendingOf(run.id);
      return found.length === 2 && found;
    });
    expect(pending.map((a: any) => [a.node_id, a.prompt]).sort()).toEqual([
      ['left', 'Left?'],
      ['right', 'Right?'],
    ]);
    const left = pending.find((a: any) => a.node_id === 'left');
    const right = pending.find((a: any) => a.node_id === 'right');

    const answered = await respond({ id: left.id, approved: true, comment: 'L', wait_ms: 10_000 });
    expect(answered.run).toMatchObject({ id: run.id, status: 'interrupted', approval: { id: right.id, prompt: 'Right?' } });
    expect((await api.pendingOf(run.id)).map((a) => a.id)).toEqual([right.id]);

    await respond({ id: right.id, approved: false, comment: 'R' });
    await api.runUntil(run.id, 'completed');
    const { state } = await stateOf(run.session_id);
    expect([...state.answers].sort()).toEqual(['left:true:L', 'right:false:R']);
    expect(state.joined).toBe(2);
    expect(await api.pendingOf(run.id)).toEqual([]);
  });

  it('an expiring interrupt is decided by timeout as on_timeout says, and the run goes on', async () => {
    const run = await start('lg-expiring');
    expect(run.status).toBe('interrupted');
    const [asked] = await api.pendingOf(run.id);
    expect(asked).toMatchObject({ id: run.approval.id, prompt: 'Anyone?', on_timeout: 'approve', expires_at: expect.any(String) });
    expect(Date.parse(asked.expires_at) - Date.parse(asked.requested_at)).toBe(300);

    await api.runUntil(run.id, 'completed');
    expect((await api.get(`/api/approvals/${run.approval.id}`)).body).toMatchObject({ status: 'approved', decided_by: 'timeout' });
    expect((await stateOf(run.session_id)).state).toEqual({ answer: { approved: true, comment: 'expired' } });
    const events = await api.replay(run.session_id, (e) => e.type === 'completed');
    expect(events.find((r) => r.event.type === 'approval_decided')?.event).toMatchObject({ approval_id: run.approval.id, approved: true, by: 'timeout' });
  });

  it('cancelling an interrupted run closes every pending approval of it', async () => {
    const run = await start('lg-parallel');
    const pending = await waitFor('two pending approvals', async () => {
      const found = await api.pendingOf(run.id);
      return found.length === 2 && found;
    });
    const cancelled = await api.post(`/api/runs/${run.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ id: run.id, status: 'cancelled' });
    expect(await api.pendingOf(run.id)).toEqual([]);
    for (const approval of pending) {
      expect((await api.get(`/api/approvals/${approval.id}`)).body.status).toBe('cancelled');
      expect((await api.post('/api/approval/respond', { id: approval.id, approved: true })).status).toBe(409);
    }
    const events = (await api.replay(run.session_id, (e) => e.type === 'cancelled')).map((r) => r.event.type);
    expect(events.at(-1)).toBe('cancelled');
    expect((await api.get(`/api/runs/${run.id}`)).body.status).toBe('cancelled');
  });

  it('respond-and-wait (wait_ms) answers with the run at its next stop: the next interrupt, then the end', async () => {
    const run = await start('lg-twice');
    const first = await respond({ id: run.approval.id, approved: true, comment: 'a', wait_ms: 10_000 });
    expect(first).toMatchObject({ id: run.approval.id, status: 'approved', run: { id: run.id, status: 'interrupted', approval: { prompt: 'Second check?', node_id: 'review' } } });
    const second = await respond({ id: first.run.approval.id, resume: 'b', wait_ms: 10_000 });
    expect(second).toMatchObject({ status: 'approved', run: { id: run.id, status: 'completed', state: { answers: [{ approved: true, comment: 'a' }, 'b'] } } });
  });
});
