import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Annotation, END, interrupt, START, StateGraph } from '@langchain/langgraph';
import { Client, type ThreadState } from '@langchain/langgraph-sdk';
import { builtInAgents } from '../../src/agents/index.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { call, type TestApi } from '../support/app.js';
import { graphAgent } from '../support/langgraph.js';
import { sdkFailure as failure, startSecuredTenants, tenantKeys, type SecuredTenants } from '../support/langgraph-sdk.js';
import { waitFor } from '../support/wait.js';

/**
 * The threads routes of the LangGraph Server API, driven by the real `@langchain/langgraph-sdk`
 * Client against agentplane on memory and on Redis, with API keys of two tenants (A: a user and
 * a viewer key; B: a user key). Runs start through POST /api/runs/wait with the thread id as
 * the session id, and continue through POST /api/sessions/resume.
 */

const KEYS = tenantKeys('threads');

/** first → second, each appending its name to `items`. */
const Steps = Annotation.Root({ items: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }), note: Annotation<string> });
const steps = new StateGraph(Steps)
  .addNode('first', () => ({ items: ['first'] }))
  .addNode('second', () => ({ items: ['second'] }))
  .addEdge(START, 'first')
  .addEdge('first', 'second')
  .addEdge('second', END)
  .compile();

/** Asks with interrupt() and keeps the answer. */
const ask = new StateGraph(Annotation.Root({ answer: Annotation<string> }))
  .addNode('ask', () => ({ answer: String(interrupt({ question: 'proceed?' })) }))
  .addEdge(START, 'ask')
  .addEdge('ask', END)
  .compile();

/** Holds its run in `hold` until the test opens the gate. */
let openGate: () => void = () => undefined;
let gate = Promise.resolve();
const held = new StateGraph(Annotation.Root({ done: Annotation<boolean> }))
  .addNode('hold', async () => {
    await gate;
    return { done: true };
  })
  .addEdge(START, 'hold')
  .addEdge('hold', END)
  .compile();

const agents = () => new AgentRegistry([...builtInAgents, graphAgent('lg-steps', steps, ['first', 'second']), graphAgent('lg-ask', ask, ['ask']), graphAgent('lg-held', held, ['hold'])]);

/**
 * What POST /threads/:id/state answers, as LangGraph's server does (the SDK's type says
 * `{ configurable }`; its server and the Python SDK say `{ checkpoint }`).
 */
type Updated = { checkpoint: ThreadState['checkpoint'] };

/** A state without its thread: equal for a thread and its copy. */
const withoutThread = (state: ThreadState) =>
  JSON.parse(JSON.stringify(state, (key, value) => (key === 'thread_id' ? undefined : value as unknown))) as unknown;

describe.each(['memory', 'redis'] as const)('LangGraph SDK: threads on %s', (backend) => {
  let tenants: SecuredTenants | undefined;
  let app: TestApi;
  let a: Client;
  let aViewer: Client;
  let b: Client;

  beforeAll(async () => {
    tenants = await startSecuredTenants(backend, { keys: KEYS, agents: agents() });
    ({ app, a, aViewer, b } = tenants);
  });
  afterAll(async () => {
    openGate();
    await tenants?.close();
  });

  /** Runs `agent` on the thread to its stop (POST /api/runs/wait as tenant A). */
  async function runOn(threadId: string, agentId: string, input: Record<string, unknown> = {}) {
    const answer = await call(`${app.url}/api/runs/wait`, { method: 'POST', json: { agent_id: agentId, session_id: threadId, input }, headers: { 'X-Api-Key': KEYS.a } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body as { run_id: string; status: string };
  }

  /** Continues the thread from its latest checkpoint (POST /api/sessions/resume) and waits for the run to complete. */
  async function resume(threadId: string) {
    const started = await call(`${app.url}/api/sessions/resume?session_id=${threadId}`, { method: 'POST', headers: { 'X-Api-Key': KEYS.a } });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    return waitFor(`run ${started.body.run_id} completed`, async () => {
      const run = await call(`${app.url}/api/runs/${started.body.run_id}`, { headers: { 'X-Api-Key': KEYS.a } });
      return run.body.status === 'completed' && run.body;
    });
  }

  /** Creates threads one clock tick apart, so their created_at order is their creation order. */
  async function createInOrder(metadatas: Record<string, unknown>[]) {
    const threads = [];
    for (const metadata of metadatas) {
      const before = Date.now();
      await waitFor('the clock to tick', () => Date.now() > before);
      threads.push(await a.threads.create({ metadata }));
    }
    return threads;
  }

  describe('CRUD', () => {
    it('creates, reads, patches and deletes a thread; its id given or made, if_exists raise or do_nothing', async () => {
      const created = await a.threads.create({ metadata: { name: 'one' } });
      expect(created).toEqual({
        thread_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        created_at: expect.any(String),
        updated_at: expect.any(String),
        state_updated_at: created.created_at,
        metadata: { name: 'one' },
        status: 'idle',
        values: {},
        interrupts: {},
        config: {},
        error: null,
      });
      expect(await a.threads.get(created.thread_id)).toEqual(created);

      const patched = await a.threads.update(created.thread_id, { metadata: { modified: true } });
      expect(patched.metadata).toEqual({ name: 'one', modified: true });
      expect((await a.threads.update(created.thread_id, { metadata: { name: null } })).metadata).toEqual({ modified: true });
      expect((await a.threads.get(created.thread_id)).metadata).toEqual({ modified: true });

      const threadId = randomUUID();
      expect((await a.threads.create({ threadId, metadata: { v: 1 } })).thread_id).toBe(threadId);
      const raised = await failure(a.threads.create({ threadId, metadata: { v: 2 } }));
      expect(raised).toEqual({ status: 409, body: { error: { code: 'conflict', message: `Thread "${threadId}" already exists.` }, detail: `Thread "${threadId}" already exists.` } });
      expect((await a.threads.create({ threadId, ifExists: 'do_nothing', metadata: { v: 3 } })).metadata).toEqual({ v: 1 });

      expect(await a.threads.delete(created.thread_id)).toBeUndefined();
      expect((await failure(a.threads.get(created.thread_id))).status).toBe(404);
      expect((await failure(a.threads.delete(created.thread_id))).status).toBe(404);
      expect((await call(`${app.url}/api/sessions?session_id=${created.thread_id}`, { headers: { 'X-Api-Key': KEYS.a } })).body.sessions).toEqual([]);
    });

    it('refuses bad input with a 4xx and detail, changing nothing', async () => {
      const unknown = await failure(a.threads.create({ graphId: 'no-such-graph' }));
      expect(unknown.status).toBe(400);
      expect(unknown.body.detail).toContain('no-such-graph');
      expect((await failure(a.threads.create({ threadId: 'bad id!' }))).status).toBe(400);
      const thread = await a.threads.create({ metadata: { keep: 1 } });
      expect((await failure(a.threads.update(thread.thread_id, { metadata: { graph_id: 'nope' } }))).status).toBe(400);
      const tooBig = await failure(a.threads.update(thread.thread_id, { metadata: { blob: 'x'.repeat(70_000) } }));
      expect(tooBig.status).toBe(413);
      expect((await a.threads.get(thread.thread_id)).metadata).toEqual({ keep: 1 });
      const supersteps = await failure(a.threads.create({ supersteps: [{ updates: [{ values: {}, asNode: 'first' }] }] }));
      expect(supersteps.status).toBe(400);
      expect(supersteps.body.detail).toContain('supersteps');
    });

    it('deletes a busy thread: its active run is cancelled, then the thread goes', async () => {
      gate = new Promise<void>((resolve) => (openGate = resolve));
      const thread = await a.threads.create();
      const started = await call(`${app.url}/api/runs`, { method: 'POST', json: { agent_id: 'lg-held', session_id: thread.thread_id }, headers: { 'X-Api-Key': KEYS.a } });
      expect(started.status).toBe(202);
      await waitFor('the run to hold', async () => (await a.threads.get(thread.thread_id)).status === 'busy');
      const busy = await failure(a.threads.updateState(thread.thread_id, { values: { done: false } }));
      expect(busy.status).toBe(409);

      await a.threads.delete(thread.thread_id);
      openGate();
      expect((await failure(a.threads.get(thread.thread_id))).status).toBe(404);
      const run = await call(`${app.url}/api/runs/${started.body.run_id}`, { headers: { 'X-Api-Key': KEYS.a } });
      expect(run.status).toBe(404);
    });
  });

  describe('search and count', () => {
    it('filters by metadata, ids, status and values; pages and sorts; counts', async () => {
      const suite = randomUUID();
      const [t1, t2, t3] = await createInOrder([{ suite, n: 1, tags: ['x', 'y'] }, { suite, n: 2 }, { suite, n: 3, nested: { deep: true, other: 1 } }]);
      const ids = (threads: { thread_id: string }[]) => threads.map((t) => t.thread_id);

      expect(ids(await a.threads.search({ metadata: { suite } }))).toEqual([t3!.thread_id, t2!.thread_id, t1!.thread_id]);
      expect(ids(await a.threads.search({ metadata: { suite }, sortBy: 'created_at', sortOrder: 'asc' }))).toEqual([t1!.thread_id, t2!.thread_id, t3!.thread_id]);
      expect(ids(await a.threads.search({ metadata: { suite }, limit: 1, offset: 1 }))).toEqual([t2!.thread_id]);
      expect(ids(await a.threads.search({ metadata: { suite, nested: { deep: true } } }))).toEqual([t3!.thread_id]);
      expect(ids(await a.threads.search({ metadata: { suite, tags: ['y'] } }))).toEqual([t1!.thread_id]);
      expect(ids(await a.threads.search({ ids: [t1!.thread_id, t3!.thread_id, randomUUID()] }))).toEqual([t3!.thread_id, t1!.thread_id]);
      expect(await a.threads.search({ metadata: { suite }, select: ['thread_id', 'metadata'], limit: 1 })).toEqual([{ thread_id: t3!.thread_id, metadata: { suite, n: 3, nested: { deep: true, other: 1 } } }]);
      const page = await call(`${app.url}/threads/search`, { method: 'POST', json: { metadata: { suite }, limit: 2 }, headers: { 'X-Api-Key': KEYS.a } });
      expect(page.headers.get('x-pagination-next')).toBe('2');
      expect(await a.threads.count({ metadata: { suite } })).toBe(3);

      // Runs give the threads a status and values: t1 completes, t2 fails (echo's fail), t3 waits at an interrupt.
      await runOn(t1!.thread_id, 'lg-steps', { note: suite });
      expect((await runOn(t2!.thread_id, 'echo', { fail: 'boom' })).status).toBe('failed');
      expect((await runOn(t3!.thread_id, 'lg-ask')).status).toBe('interrupted');
      expect(ids(await a.threads.search({ metadata: { suite }, status: 'idle' }))).toEqual([t1!.thread_id]);
      expect(ids(await a.threads.search({ metadata: { suite }, status: 'error' }))).toEqual([t2!.thread_id]);
      expect(ids(await a.threads.search({ metadata: { suite }, status: 'interrupted' }))).toEqual([t3!.thread_id]);
      expect(ids(await a.threads.search({ values: { note: suite, items: ['second'] } }))).toEqual([t1!.thread_id]);
      expect(ids(await a.threads.search({ metadata: { suite }, sortBy: 'status', sortOrder: 'asc' }))).toEqual([t2!.thread_id, t1!.thread_id, t3!.thread_id]);
      expect(await a.threads.count({ metadata: { suite }, status: 'error' })).toBe(1);
      expect(await a.threads.count({ metadata: { graph_id: 'lg-steps', suite } })).toBe(1);
    });
    it('answers the newest threads with no filter (read in one step) as a filtered search and a read of each do', async () => {
      const suite = randomUUID();
      const [plain, odd, recorded, done, failed, waiting, native] = await createInOrder([
        { suite },
        { suite, path: 'a/b', text: 'é ☃ "quoted"', list: [1, { deep: null }] },
        { suite, assistant_id: 'recorded-assistant' },
        { suite, n: 4 },
        { suite, n: 5 },
        { suite, n: 6 },
        { suite, n: 7 },
      ]);
      await runOn(recorded!.thread_id, 'lg-steps', { note: 'kept' });
      await runOn(done!.thread_id, 'lg-steps', { note: 'a/b é ☃ \\ "q"' });
      expect((await runOn(failed!.thread_id, 'echo', { fail: 'boom "quoted" é' })).status).toBe('failed');
      expect((await runOn(waiting!.thread_id, 'lg-ask')).status).toBe('interrupted');
      expect((await runOn(native!.thread_id, 'echo', { message: 'hi/é' })).status).toBe('completed');
      const created = [native, waiting, failed, done, recorded, odd, plain].map((thread) => thread!.thread_id);

      const newest = await call(`${app.url}/threads/search`, { method: 'POST', json: { limit: 7 }, headers: { 'X-Api-Key': KEYS.a } });
      expect(newest.status).toBe(200);
      const threads = newest.body as unknown as { thread_id: string; status: string }[];
      expect(threads.map((t) => t.thread_id)).toEqual(created);
      expect(threads.map((t) => t.status)).toEqual(['idle', 'interrupted', 'error', 'idle', 'idle', 'idle', 'idle']);
      expect(newest.headers.get('x-pagination-next')).toBe('7');
      // The same threads through the filtering path, and one by one.
      expect(await a.threads.search({ metadata: { suite } })).toEqual(threads);
      for (const thread of threads) expect(await a.threads.get(thread.thread_id)).toEqual(thread);
      expect(threads[3]).toMatchObject({ values: { items: ['first', 'second'], note: 'a/b é ☃ \\ "q"' }, metadata: { suite, n: 4, graph_id: 'lg-steps' } });
      expect(threads[4]).toMatchObject({ metadata: { suite, assistant_id: 'recorded-assistant', graph_id: 'lg-steps' } });
      expect(threads[5]).toMatchObject({ metadata: { suite, path: 'a/b', text: 'é ☃ "quoted"', list: [1, { deep: null }] }, values: {}, status: 'idle' });
      expect(threads[2]).toMatchObject({ error: 'boom "quoted" é', status: 'error' });
      // An offset and a page one past the page: the next page is announced, the last one not.
      const page = await call(`${app.url}/threads/search`, { method: 'POST', json: { limit: 2, offset: 1 }, headers: { 'X-Api-Key': KEYS.a } });
      expect((page.body as unknown as { thread_id: string }[]).map((t) => t.thread_id)).toEqual(created.slice(1, 3));
      expect(page.headers.get('x-pagination-next')).toBe('3');
      const past = await call(`${app.url}/threads/search`, { method: 'POST', json: { limit: 10, offset: 995 }, headers: { 'X-Api-Key': KEYS.a } });
      expect(past.status).toBe(200);
      expect(past.headers.get('x-pagination-next')).toBeNull();
    });
  });

  describe('status, values and interrupts', () => {
    it('shows a graph run: values, metadata naming the graph, an interrupt by task, and the failed run of a native agent', async () => {
      const thread = await a.threads.create();
      await runOn(thread.thread_id, 'lg-ask');
      const got = await a.threads.get(thread.thread_id);
      expect(got.status).toBe('interrupted');
      expect(got.metadata).toEqual({ graph_id: 'lg-ask', assistant_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
      const state = await a.threads.getState(thread.thread_id);
      expect(state.next).toEqual(['ask']);
      expect(state.tasks).toHaveLength(1);
      expect(state.tasks[0]!.interrupts).toEqual([{ id: expect.any(String), value: { question: 'proceed?' } }]);
      expect(got.interrupts).toEqual({ [state.tasks[0]!.id]: state.tasks[0]!.interrupts });

      const failed = await a.threads.create();
      await runOn(failed.thread_id, 'echo', { fail: 'boom' });
      expect(await a.threads.get(failed.thread_id)).toMatchObject({ status: 'error', error: 'boom', values: { fail: 'boom' }, metadata: { graph_id: 'echo' } });
    });
  });

  describe('state and history', () => {
    it('a new thread has an empty state and history; one created with a graph_id takes an update before any run', async () => {
      const thread = await a.threads.create();
      expect(await a.threads.getState(thread.thread_id)).toEqual({ values: {}, next: [], tasks: [], metadata: {}, created_at: null, checkpoint: null, parent_checkpoint: null });
      expect(await a.threads.getHistory(thread.thread_id)).toEqual([]);
      const noGraph = await failure(a.threads.updateState(thread.thread_id, { values: { items: ['x'] } }));
      expect(noGraph.status).toBe(400);

      const bound = await a.threads.create({ graphId: 'lg-steps' });
      const { checkpoint } = (await a.threads.updateState(bound.thread_id, { values: { items: ['seeded'] }, asNode: 'first' })) as unknown as Updated;
      const state = await a.threads.getState(bound.thread_id);
      expect(state).toMatchObject({ values: { items: ['seeded'] }, next: ['second'], checkpoint });
      // No agent to resume it with yet; the first run binds it and keeps the state.
      const unbound = await call(`${app.url}/api/sessions/resume?session_id=${bound.thread_id}`, { method: 'POST', headers: { 'X-Api-Key': KEYS.a } });
      expect(unbound.status).toBe(409);
      await runOn(bound.thread_id, 'lg-steps', { note: 'bound' });
      expect((await a.threads.getState(bound.thread_id)).values).toEqual({ items: ['seeded', 'first', 'second'], note: 'bound' });
      expect((await a.threads.get(bound.thread_id)).metadata).toEqual({ graph_id: 'lg-steps', assistant_id: expect.any(String) });
    });

    it('getState after a run, history, a state at an earlier checkpoint, updateState as a node then a run that continues from it', async () => {
      const thread = await a.threads.create();
      await runOn(thread.thread_id, 'lg-steps', { note: 'n' });
      const state = await a.threads.getState(thread.thread_id);
      expect(state).toMatchObject({ values: { items: ['first', 'second'], note: 'n' }, next: [], tasks: [] });
      expect(state.checkpoint).toEqual({ thread_id: thread.thread_id, checkpoint_ns: '', checkpoint_id: expect.any(String), checkpoint_map: null });
      expect((await a.threads.get(thread.thread_id)).values).toEqual(state.values);

      const history = await a.threads.getHistory(thread.thread_id);
      expect(history.map((s) => s.next)).toEqual([[], ['second'], ['first'], ['__start__']]);
      expect(history.map((s) => (s.values as { items?: string[] }).items)).toEqual([['first', 'second'], ['first'], [], []]);
      expect(history[0]).toEqual(state);
      for (let i = 0; i < history.length - 1; i++) expect(history[i]!.parent_checkpoint).toEqual(history[i + 1]!.checkpoint);
      const afterFirst = history[1]!;
      expect(await a.threads.getHistory(thread.thread_id, { limit: 2 })).toEqual(history.slice(0, 2));
      expect(await a.threads.getHistory(thread.thread_id, { before: { configurable: { checkpoint_id: afterFirst.checkpoint.checkpoint_id } } })).toEqual(history.slice(2));
      expect(await a.threads.getHistory(thread.thread_id, { metadata: { step: 1 } })).toEqual([afterFirst]);
      const older = await call(`${app.url}/threads/${thread.thread_id}/history?limit=1&before=${afterFirst.checkpoint.checkpoint_id}`, { headers: { 'X-Api-Key': KEYS.a } });
      expect(older.body).toEqual([history[2]]);

      expect(await a.threads.getState(thread.thread_id, afterFirst.checkpoint.checkpoint_id!)).toEqual(afterFirst);
      expect(await a.threads.getState(thread.thread_id, afterFirst.checkpoint)).toEqual(afterFirst);
      expect(await a.threads.getState(thread.thread_id, undefined, { select: ['next', 'values.items'] })).toEqual({ next: [], values: { items: ['first', 'second'] } });
      expect((await failure(a.threads.getState(thread.thread_id, randomUUID()))).status).toBe(404);

      // An update written as `first`: `second` is next, and the run that resumes the thread runs it alone.
      await a.threads.updateState(thread.thread_id, { values: { items: ['edited'] }, asNode: 'first' });
      expect(await a.threads.getState(thread.thread_id)).toMatchObject({ values: { items: ['first', 'second', 'edited'] }, next: ['second'] });
      expect((await a.threads.get(thread.thread_id)).status).toBe('idle');
      await resume(thread.thread_id);
      expect((await a.threads.getState(thread.thread_id)).values).toEqual({ items: ['first', 'second', 'edited', 'second'], note: 'n' });

      // A fork: an update from the checkpoint after `first` starts from its values.
      await a.threads.updateState(thread.thread_id, { values: { items: ['forked'] }, asNode: 'first', checkpointId: afterFirst.checkpoint.checkpoint_id! });
      const forked = await a.threads.getState(thread.thread_id);
      expect(forked).toMatchObject({ values: { items: ['first', 'forked'] }, next: ['second'], parent_checkpoint: afterFirst.checkpoint });
      const mirrored = await call(`${app.url}/api/sessions/state?session_id=${thread.thread_id}`, { headers: { 'X-Api-Key': KEYS.a } });
      expect(mirrored.body).toMatchObject({ state: { items: ['first', 'forked'] }, node_id: 'second' });
    });

    it('a native agent: its state, history by seq_num, an update merged into its state', async () => {
      const thread = await a.threads.create();
      await runOn(thread.thread_id, 'echo', { text: 'hi' });
      const state = await a.threads.getState(thread.thread_id);
      expect(state).toMatchObject({ values: { text: 'hi', echoed: true }, next: [], tasks: [] });
      const history = await a.threads.getHistory(thread.thread_id);
      expect(history.map((s) => s.next)).toEqual([[], ['respond'], ['receive']]);
      expect(history.map((s) => s.checkpoint.checkpoint_id)).toEqual(['3', '2', '1']);
      expect(await a.threads.getState(thread.thread_id, '2')).toEqual(history[1]);
      const { checkpoint } = (await a.threads.updateState(thread.thread_id, { values: { text: 'edited' } })) as unknown as Updated;
      expect(checkpoint).toEqual({ thread_id: thread.thread_id, checkpoint_ns: '', checkpoint_id: '4', checkpoint_map: null });
      expect((await a.threads.get(thread.thread_id)).values).toEqual({ text: 'edited', echoed: true });
      expect((await failure(a.threads.updateState(thread.thread_id, { values: {}, asNode: 'receive' }))).status).toBe(400);
    });
  });

  describe('copy', () => {
    it('copies a graph thread: the same metadata, state and history; a run or an update on the copy leaves the source as it was', async () => {
      const source = await a.threads.create({ metadata: { owner: 'ana' } });
      await runOn(source.thread_id, 'lg-steps', { note: 'src' });
      const sourceState = await a.threads.getState(source.thread_id);
      const sourceHistory = await a.threads.getHistory(source.thread_id);

      const copy = await a.threads.copy(source.thread_id);
      expect(copy.thread_id).not.toBe(source.thread_id);
      expect(copy).toMatchObject({ metadata: (await a.threads.get(source.thread_id)).metadata, status: 'idle', values: sourceState.values });
      const copyState = await a.threads.getState(copy.thread_id);
      expect(copyState.checkpoint.thread_id).toBe(copy.thread_id);
      expect(withoutThread(copyState)).toEqual(withoutThread(sourceState));
      const copyHistory = await a.threads.getHistory(copy.thread_id);
      expect(copyHistory.map(withoutThread)).toEqual(sourceHistory.map(withoutThread));
      // The checkpoints' metadata names the thread they are of (LangGraph records the thread_id there).
      expect(sourceState.metadata?.thread_id).toBe(source.thread_id);
      expect(new Set(copyHistory.map((state) => state.metadata?.thread_id))).toEqual(new Set([copy.thread_id]));

      await a.threads.updateState(copy.thread_id, { values: { items: ['on-copy'] } });
      await runOn(copy.thread_id, 'lg-steps', { note: 'copy' });
      expect((await a.threads.getState(copy.thread_id)).values).toEqual({ items: ['first', 'second', 'on-copy', 'first', 'second'], note: 'copy' });
      expect(await a.threads.getState(source.thread_id)).toEqual(sourceState);
      expect((await failure(a.threads.copy(randomUUID()))).status).toBe(404);
    });
  });

  describe('tenancy and roles', () => {
    it("tenant B gets 404 for every call on tenant A's thread, and never lists it; a viewer reads but cannot create", async () => {
      const thread = await a.threads.create({ metadata: { secret: 'a' } });
      await runOn(thread.thread_id, 'lg-steps');
      const id = thread.thread_id;
      const calls: [string, () => Promise<unknown>][] = [
        ['get', () => b.threads.get(id)],
        ['update', () => b.threads.update(id, { metadata: { hijacked: true } })],
        ['delete', () => b.threads.delete(id)],
        ['copy', () => b.threads.copy(id)],
        ['getState', () => b.threads.getState(id)],
        ['getState at', () => b.threads.getState(id, { thread_id: id, checkpoint_ns: '', checkpoint_id: randomUUID(), checkpoint_map: null })],
        ['updateState', () => b.threads.updateState(id, { values: { items: ['x'] } })],
        ['getHistory', () => b.threads.getHistory(id)],
      ];
      for (const [name, attempt] of calls) expect((await failure(attempt())).status, name).toBe(404);
      expect(await b.threads.search({ metadata: { secret: 'a' } })).toEqual([]);
      expect(await b.threads.search({ ids: [id] })).toEqual([]);
      expect(await b.threads.count({ metadata: { secret: 'a' } })).toBe(0);
      expect((await a.threads.get(id)).metadata).toEqual({ secret: 'a', graph_id: 'lg-steps', assistant_id: expect.any(String) });
      // B's own thread of the same id is another thread.
      expect((await b.threads.create({ threadId: id })).metadata).toEqual({});

      const forbidden = await failure(aViewer.threads.create());
      expect(forbidden.status).toBe(403);
      expect(forbidden.body.detail).toBe('This operation needs the user role.');
      expect((await failure(aViewer.threads.updateState(id, { values: {} }))).status).toBe(403);
      expect((await aViewer.threads.search({ ids: [id] })).map((t) => t.thread_id)).toEqual([id]);
      expect((await aViewer.threads.getHistory(id)).length).toBeGreaterThan(0);
    });
  });
});
