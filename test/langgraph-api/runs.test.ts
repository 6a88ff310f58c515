import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BACKENDS, collect, gates, useLangGraphApi } from './runs-support.js';
import { waitFor } from '../support/wait.js';
import { sdkFailure } from '../support/langgraph-sdk.js';
import { MAX_SESSION_METADATA_BYTES } from '../../src/domain/session-metadata.js';
import { DEFAULT_TENANT } from '../../src/domain/types.js';

/*
 * The LangGraph Server API's runs through the real SDK Client, on both backends: waits on a
 * thread and stateless, streams in every supported mode (event names and order), create then
 * join and joinStream with a last event id, native agents as assistants, and refusals.
 */

describe.each(BACKENDS)('LangGraph runs through the SDK: wait, stream, join (%s)', (backend) => {
  const api = useLangGraphApi(backend);

  it('runs.wait on a thread answers its values, names the run in Content-Location, and the run is an agentplane run', async () => {
    const thread = randomUUID();
    let created: { run_id: string; thread_id?: string } | undefined;
    const values = await api.client.runs.wait(thread, 'lg-two', { input: { word: 'w' }, ifNotExists: 'create', onRunCreated: (meta) => (created = meta) });
    expect(values).toEqual({ steps: ['first', 'second'], word: 'w' });
    expect(created).toEqual({ run_id: expect.any(String), thread_id: thread });
    const listed = await api.get(`/api/runs?session_id=${thread}`);
    expect(listed.body.runs).toEqual([expect.objectContaining({ id: created!.run_id, agent_id: 'lg-two', status: 'completed' })]);
    const run = await api.client.runs.get(thread, created!.run_id);
    expect(run).toMatchObject({ run_id: created!.run_id, thread_id: thread, status: 'success', metadata: {}, multitask_strategy: 'reject' });
  });

  it('runs.wait stateless answers the values and removes its thread (on_completion delete), or keeps it', async () => {
    let created: { run_id: string; thread_id?: string } | undefined;
    const values = await api.client.runs.wait(null, 'lg-two', { input: { word: 's' }, onRunCreated: (meta) => (created = meta) });
    expect(values).toEqual({ steps: ['first', 'second'], word: 's' });
    expect(created?.thread_id).toBeUndefined();
    expect((await api.get(`/api/runs/${created!.run_id}`)).status).toBe(404);

    // The SDK's types leave on_completion out of a stateless wait; a client may send it all the same.
    const kept = await api.post('/runs/wait', { assistant_id: 'lg-two', input: { word: 'k' }, on_completion: 'keep' });
    expect(kept.body).toEqual({ steps: ['first', 'second'], word: 'k' });
    const [, thread, runId] = /^\/threads\/([^/]+)\/runs\/([^/]+)$/.exec(kept.headers.get('content-location') ?? '') ?? [];
    expect(await api.get(`/api/runs/${runId}`)).toMatchObject({ status: 200, body: { status: 'completed', session_id: thread } });
  });

  it('runs.stream in values mode (the default): metadata, then the values after each step', async () => {
    const parts = await collect(api.client.runs.stream(randomUUID(), 'lg-two', { input: { word: 'v' }, ifNotExists: 'create' }));
    expect(parts.map((p) => p.event)).toEqual(['metadata', 'values', 'values', 'values']);
    expect(parts[0]!.data).toEqual({ run_id: expect.any(String), attempt: 1 });
    expect(parts.slice(1).map((p) => p.data)).toEqual([
      { steps: [], word: 'v' },
      { steps: ['first'], word: 'v' },
      { steps: ['first', 'second'], word: 'v' },
    ]);
    expect(new Set(parts.slice(1).map((p) => p.id)).size).toBe(3);
  });

  it.each([
    ['updates', ['metadata', 'updates', 'updates'], (data: unknown[]) => expect(data).toEqual([{ first: { steps: ['first'] } }, { second: { steps: ['second'] } }])],
    ['custom', ['metadata', 'custom'], (data: unknown[]) => expect(data).toEqual([{ progress: 'second' }])],
    ['tasks', ['metadata', 'tasks', 'tasks', 'tasks', 'tasks'], (data: any[]) => expect(data.map((t) => [t.name, 'result' in t])).toEqual([['first', false], ['first', true], ['second', false], ['second', true]])],
    ['checkpoints', ['metadata', 'checkpoints', 'checkpoints', 'checkpoints', 'checkpoints'], (data: any[]) => expect(data.map((c) => c.next)).toEqual([['__start__'], ['first'], ['second'], []])],
    ['debug', ['metadata', ...Array(8).fill('debug')], (data: any[]) =>
      expect(data.map((d) => d.type)).toEqual(['checkpoint', 'checkpoint', 'task', 'task_result', 'checkpoint', 'task', 'task_result', 'checkpoint'])],
  ] as const)('runs.stream in %s mode: the event names, in order, with their chunks', async (mode, events, check) => {
    const parts = await collect(api.client.runs.stream(randomUUID(), 'lg-two', { input: { word: 'm' }, streamMode: mode, ifNotExists: 'create' }));
    expect(parts.map((p) => p.event)).toEqual(events);
    check(parts.slice(1).map((p) => p.data) as never);
  });

  it('runs.stream in several modes interleaves them step by step', async () => {
    const parts = await collect(api.client.runs.stream(randomUUID(), 'lg-two', { input: { word: 'x' }, streamMode: ['values', 'updates'], ifNotExists: 'create' }));
    expect(parts.map((p) => p.event)).toEqual(['metadata', 'values', 'updates', 'values', 'updates', 'values']);
  });

  it('runs.stream in messages-tuple mode: the model tokens as "messages" events [chunk, metadata], joined the final message', async () => {
    const parts = await collect(
      api.client.runs.stream(randomUUID(), 'lg-chat', { input: { messages: [{ type: 'human', content: 'hello' }] }, streamMode: ['messages-tuple', 'values'], ifNotExists: 'create' }),
    );
    const tokens = parts.filter((p) => p.event === 'messages').map((p) => p.data as [{ content: string }, { langgraph_node: string }]);
    expect(tokens.map(([chunk]) => chunk.content).join('')).toBe('hi!');
    expect(tokens.every(([, metadata]) => metadata.langgraph_node === 'model')).toBe(true);
    const last = parts.filter((p) => p.event === 'values').at(-1)!.data as { messages: { content: string; type: string }[] };
    expect(last.messages.map((m) => [m.type, m.content])).toEqual([['human', 'hello'], ['ai', 'hi!']]);
  });

  it('runs.stream in the legacy messages mode: messages/metadata once per message, messages/partial growing to the answer, messages/complete with the values\' new messages', async () => {
    const parts = await collect(
      api.client.runs.stream(randomUUID(), 'lg-chat', { input: { messages: [{ type: 'human', content: 'hello', id: 'human-1' }] }, streamMode: 'messages', ifNotExists: 'create' }),
    );
    const events = parts.map((p) => p.event);
    // Only what the mode makes: no values or tuple frames (the run published them for it).
    expect(new Set(events)).toEqual(new Set(['metadata', 'messages/metadata', 'messages/partial', 'messages/complete']));
    expect(events.filter((e) => e === 'messages/metadata')).toHaveLength(1);
    const partials = parts.filter((p) => p.event === 'messages/partial').map((p) => (p.data as { content: string }[])[0]!.content);
    expect(partials.length).toBeGreaterThan(1);
    expect(partials.at(-1)).toBe('hi!');
    // Each partial extends the one before it.
    for (let i = 1; i < partials.length; i += 1) expect(partials[i]!.startsWith(partials[i - 1]!)).toBe(true);
    const completed = parts.filter((p) => p.event === 'messages/complete').flatMap((p) => p.data as { type: string; content: string }[]);
    expect(completed.map((m) => [m.type, m.content])).toEqual([['human', 'hello'], ['ai', 'hi!']]);
    expect(events.indexOf('messages/metadata')).toBeLessThan(events.indexOf('messages/partial'));
  });

  it('runs.stream with subgraphs names a subgraph\'s chunks mode|namespace', async () => {
    const parts = await collect(api.client.runs.stream(randomUUID(), 'lg-parent', { input: { word: 'p' }, streamMode: 'updates', streamSubgraphs: true, ifNotExists: 'create' }));
    const names = parts.map((p) => p.event);
    expect(names[0]).toBe('metadata');
    expect(names).toContain('updates');
    expect(names.find((n) => n.startsWith('updates|'))).toMatch(/^updates\|sub:/);
    expect(parts.find((p) => p.event.startsWith('updates|'))!.data).toEqual({ inner: { steps: ['inner'] } });
  });

  it('runs.create, then join answers the values and joinStream from a last event id gives the rest: none twice, none missing', async () => {
    const thread = randomUUID();
    const before = gates.waiting;
    const run = await api.client.runs.create(thread, 'lg-gated', { input: { word: 'hold' }, streamMode: ['values', 'updates'], ifNotExists: 'create' });
    expect(run).toMatchObject({ thread_id: thread, assistant_id: expect.any(String), status: expect.stringMatching(/^(pending|running)$/), multitask_strategy: 'reject' });
    await waitFor('the run held at its gate', () => gates.waiting > before);

    // Joined from the start (useStream's rejoin): the frames so far, up to a's update; then the client leaves.
    const firstPart: { id?: string; event: string }[] = [];
    const abort = new AbortController();
    for await (const part of api.client.runs.joinStream(thread, run.run_id, { lastEventId: '-1', signal: abort.signal })) {
      firstPart.push(part);
      if (part.event === 'updates') break;
    }
    abort.abort();
    expect(firstPart.map((p) => p.event)).toEqual(['metadata', 'values', 'updates']);

    gates.release();
    expect(await api.client.runs.join(thread, run.run_id)).toEqual({ steps: ['a:hold', 'b:hold', 'c:hold'], word: 'hold' });
    const rest = await collect(api.client.runs.joinStream(thread, run.run_id, { lastEventId: firstPart.at(-1)!.id }));
    const whole = await collect(api.client.runs.joinStream(thread, run.run_id, { lastEventId: '-1' }));
    expect(whole.map((p) => p.event)).toEqual(['metadata', 'values', 'updates', 'values', 'updates', 'values', 'updates', 'values']);
    expect([...firstPart, ...rest].map((p) => [p.id, p.event])).toEqual(whole.map((p) => [p.id, p.event]));
    expect(await api.client.runs.get(thread, run.run_id)).toMatchObject({ status: 'success' });
    // Joined once it ended, without an id: the whole run again, as LangGraph's server replays it to a late joiner.
    expect((await collect(api.client.runs.joinStream(thread, run.run_id))).map((p) => [p.id, p.event])).toEqual(whole.map((p) => [p.id, p.event]));
  });

  it('a run from an earlier checkpoint (checkpoint_id) forks the thread there', async () => {
    const thread = randomUUID();
    await api.client.runs.wait(thread, 'lg-two', { input: { word: 'f' }, ifNotExists: 'create' });
    const afterFirst = (await api.client.threads.getHistory(thread)).find((state) => state.next[0] === 'second')!;
    expect(afterFirst.values).toEqual({ steps: ['first'], word: 'f' });
    const forked = await api.client.runs.wait(thread, 'lg-two', { input: null, checkpointId: afterFirst.checkpoint.checkpoint_id! });
    expect(forked).toEqual({ steps: ['first', 'second'], word: 'f' });
    // The thread's latest checkpoint descends from the one forked from, not from the first run's last.
    const history = await api.client.threads.getHistory(thread, { limit: 100 });
    const parentOf = new Map(history.map((state) => [state.checkpoint.checkpoint_id, state.parent_checkpoint?.checkpoint_id]));
    const lineage: (string | null | undefined)[] = [history[0]!.checkpoint.checkpoint_id];
    while (lineage.at(-1) && parentOf.get(lineage.at(-1)!)) lineage.push(parentOf.get(lineage.at(-1)!));
    expect(lineage).toContain(afterFirst.checkpoint.checkpoint_id);
    expect(lineage).not.toContain(history.find((state) => state.next.length === 0 && state !== history[0])?.checkpoint.checkpoint_id);
  });

  it('a native agent is an assistant: wait answers its state, stream its values at the stop', async () => {
    const thread = randomUUID();
    expect(await api.client.runs.wait(thread, 'echo', { input: { text: 'hi' }, ifNotExists: 'create' })).toEqual({ text: 'hi', echoed: true });
    const parts = await collect(api.client.runs.stream(thread, 'echo', { input: { text: 'again' } }));
    expect(parts.map((p) => p.event)).toEqual(['metadata', 'values']);
    expect(parts[1]!.data).toEqual({ text: 'again', echoed: true });
  });

  it('a failing graph: wait throws the error as the SDK raises it, stream ends with an error event, the run is error', async () => {
    const thread = randomUUID();
    const parts = await collect(api.client.runs.stream(thread, 'lg-failing', { input: { word: 'f' }, ifNotExists: 'create' }));
    expect(parts.map((p) => p.event)).toEqual(['metadata', 'values', 'error']);
    expect(parts.at(-1)!.data).toEqual({ error: 'Error', message: 'boom' });
    await expect(api.client.runs.wait(thread, 'lg-failing', { input: {} })).rejects.toThrow('Error: boom');
    const [latest] = await api.client.runs.list(thread, { limit: 1 });
    expect(latest).toMatchObject({ status: 'error' });
    expect(await api.client.runs.list(thread, { status: 'error' })).toHaveLength(2);
    expect(await api.client.runs.list(thread, { status: 'success' })).toEqual([]);
  });

  it('after_seconds: the run stays pending until its delay passed, then runs; past 30 days is refused', async () => {
    const thread = (await api.client.threads.create()).thread_id;
    const asked = Date.now();
    const run = await api.client.runs.create(thread, 'lg-two', { input: {}, afterSeconds: 1 });
    expect(run.status).toBe('pending');
    await api.client.runs.join(thread, run.run_id);
    const done = await api.client.runs.get(thread, run.run_id);
    expect(done.status).toBe('success');
    // The worker took it no sooner than the delay: its first node started (this process's
    // clock) at least a second after the request; until then it was pending.
    const events = await api.app.backend.events.readAfter(DEFAULT_TENANT, '0-0', 100_000);
    const started = events.find(({ event }) => event.run_id === run.run_id && event.type === 'node_start');
    expect(Date.parse(started!.event.ts) - asked).toBeGreaterThanOrEqual(1_000);
    expect((await api.post('/runs/wait', { assistant_id: 'lg-two', after_seconds: 86_400 * 31 })).status).toBe(400);
  });

  it('after_seconds of 30 days (past what one setTimeout holds) keeps the run pending: a run delayed 1 s, asked after it, ends first', async () => {
    const thread = (await api.client.threads.create()).thread_id;
    const late = await api.client.runs.create(thread, 'lg-two', { input: {}, afterSeconds: 2_592_000 });
    const other = (await api.client.threads.create()).thread_id;
    const soon = await api.client.runs.create(other, 'lg-two', { input: {}, afterSeconds: 1 });
    await api.client.runs.join(other, soon.run_id);
    expect((await api.client.runs.get(other, soon.run_id)).status).toBe('success');
    expect((await api.client.runs.get(thread, late.run_id)).status).toBe('pending');
    expect((await api.get(`/api/runs/${late.run_id}`)).body.status).toBe('queued');
  });

  it("config.recursion_limit lowers the run's limit, never raises it past RUN_STEP_LIMIT (100) or the graph's own", async () => {
    /** Runs `assistant` on a new thread with `recursion_limit`: its turns when it failed, and the limit its error names. */
    const loopWith = async (assistant: string, recursionLimit: number) => {
      const thread = (await api.client.threads.create()).thread_id;
      const run = await api.client.runs.create(thread, assistant, { input: { turns: 0 }, config: { recursion_limit: recursionLimit } });
      await api.client.runs.join(thread, run.run_id);
      expect((await api.client.runs.get(thread, run.run_id)).status).toBe('error');
      const { body } = await api.get(`/api/runs/${run.run_id}`);
      return { turns: ((await api.client.threads.getState(thread)).values as { turns: number }).turns, limit: Number(/recursionLimit (\d+)/.exec(body.error)?.[1]) };
    };
    // A limit of N: N turns in the thread's values (steps 0 … N-1), then the error naming N.
    expect(await loopWith('lg-loop', 300)).toEqual({ turns: 100, limit: 100 });
    expect(await loopWith('lg-loop', 5)).toEqual({ turns: 5, limit: 5 });
    expect(await loopWith('lg-loop-8', 50)).toEqual({ turns: 8, limit: 8 });
    expect(await loopWith('lg-loop-8', 3)).toEqual({ turns: 3, limit: 3 });
  });

  it('an unknown checkpoint id is 404 with nothing written: a state update, a run on the thread (each way of naming it), a stateless run', async () => {
    const thread = (await api.client.threads.create()).thread_id;
    await api.client.runs.wait(thread, 'lg-two', { input: { word: 'w' } });
    const before = { state: await api.client.threads.getState(thread), history: await api.client.threads.getHistory(thread, { limit: 100 }), runs: await api.client.runs.list(thread) };
    const unknown = randomUUID();
    const fresh = randomUUID();
    const attempts: [string, string, Record<string, unknown>][] = [
      ['state, checkpoint_id', `/threads/${thread}/state`, { values: { word: 'reset' }, checkpoint_id: 'typo' }],
      ['state, checkpoint', `/threads/${thread}/state`, { values: { word: 'reset' }, as_node: 'first', checkpoint: { checkpoint_id: unknown } }],
      ['run, checkpoint_id', `/threads/${thread}/runs`, { assistant_id: 'lg-two', input: null, checkpoint_id: 'typo' }],
      ['wait, checkpoint', `/threads/${thread}/runs/wait`, { assistant_id: 'lg-two', input: { word: 'x' }, checkpoint: { checkpoint_id: unknown } }],
      ['stream, config', `/threads/${thread}/runs/stream`, { assistant_id: 'lg-two', input: { word: 'x' }, config: { configurable: { checkpoint_id: unknown } } }],
      ['stateless', '/runs/wait', { assistant_id: 'lg-two', input: { word: 'x' }, checkpoint_id: unknown }],
      ['new thread', `/threads/${fresh}/runs`, { assistant_id: 'lg-two', input: { word: 'x' }, if_not_exists: 'create', checkpoint_id: unknown }],
    ];
    for (const [name, path, body] of attempts) {
      const { status, body: error } = await api.post(path, body);
      expect({ name, status, code: error?.error?.code }).toEqual({ name, status: 404, code: 'not_found' });
      expect(error.detail, name).toMatch(/^Checkpoint "(typo|[0-9a-f-]{36})"/);
    }
    expect((await sdkFailure(api.client.threads.updateState(thread, { values: { word: 'reset' }, checkpointId: 'typo' }))).status).toBe(404);
    expect(await api.client.threads.getState(thread)).toEqual(before.state);
    expect(await api.client.threads.getHistory(thread, { limit: 100 })).toEqual(before.history);
    expect(await api.client.runs.list(thread)).toEqual(before.runs);
    expect((await sdkFailure(api.client.threads.get(fresh))).status).toBe(404);
  });

  it('refuses clearly, with detail: unknown assistant or thread (404), a bad webhook (400), nothing started', async () => {
    const thread = randomUUID();
    const refused = async (body: Record<string, unknown>, path = `/threads/${thread}/runs`) => {
      const { status, body: error } = await api.post(path, body);
      return { status, code: error.error.code, detail: error.detail };
    };
    expect(await refused({ assistant_id: 'nope', if_not_exists: 'create' })).toMatchObject({ status: 404, detail: 'Assistant "nope" was not found.' });
    expect(await refused({ assistant_id: 'lg-two' })).toMatchObject({ status: 404, detail: `Thread "${thread}" was not found.` });
    expect(await refused({ assistant_id: 'lg-two', webhook: 'ftp://example.com/hook', if_not_exists: 'create' })).toMatchObject({ status: 400, detail: expect.stringMatching(/^webhook: /) });
    expect(await refused({ assistant_id: 'lg-two', stream_mode: ['nonsense'] }, '/runs/stream')).toMatchObject({ status: 400, code: 'bad_request' });
    expect(await refused({ assistant_id: 'echo', input: [1], if_not_exists: 'create' })).toMatchObject({ status: 400, detail: expect.stringMatching(/^input: /) });
    expect(await refused({ assistant_id: 'echo', interrupt_before: '*', if_not_exists: 'create' })).toMatchObject({ status: 400 });
    expect((await api.get(`/api/sessions?session_id=${thread}`)).body.sessions).toEqual([]);
  });

  it("caps a run's metadata as a thread's: past 64 KiB of JSON (10,000 keys) is 413 with detail, nothing started; at the cap it is kept", async () => {
    const thread = (await api.client.threads.create()).thread_id;
    const manyKeys = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]));
    for (const [field, body] of [
      ['metadata', { metadata: manyKeys }],
      ['config.metadata', { config: { metadata: manyKeys } }],
    ] as const) {
      for (const path of [`/threads/${thread}/runs`, `/threads/${thread}/runs/wait`, '/runs/wait']) {
        const { status, body: error } = await api.post(path, { assistant_id: 'lg-two', input: {}, ...body });
        expect({ field, path, status, code: error.error?.code }).toEqual({ field, path, status: 413, code: 'payload_too_large' });
        expect(error.detail).toMatch(new RegExp(`^${field.replace('.', '\\.')}: .*more than the limit of ${MAX_SESSION_METADATA_BYTES}`));
      }
    }
    expect(await api.client.runs.list(thread)).toEqual([]);
    // The largest metadata a thread takes, a run takes too.
    const atCap = { blob: 'x'.repeat(MAX_SESSION_METADATA_BYTES - JSON.stringify({ blob: '' }).length) };
    await api.client.threads.update(thread, { metadata: atCap });
    const run = await api.client.runs.create(thread, 'lg-two', { input: {}, metadata: atCap });
    expect((await api.client.runs.get(thread, run.run_id)).metadata).toEqual(atCap);
  });
});
