import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait.js';
import { gates, useLangGraphApi } from './runs-support.js';

/**
 * Thread search and count with a metadata filter find every matching thread, however many
 * newer threads the tenant has (the metadata indexes), on memory and on Redis through the SDK:
 * a key of the thread's own metadata, `graph_id` (a thread bound by its runs, or created for a
 * graph), `assistant_id` (a graph's default assistant); combined with a status filter and sorts.
 * A status filter alone finds every busy thread and every thread paused on an approval (the
 * tenant's active runs).
 */
describe.each(['memory', 'redis'] as const)('LangGraph SDK: thread search by metadata past the newest 1,000 threads on %s', (backend) => {
  const api = useLangGraphApi(backend);

  it('finds the old threads of an owner, of a graph and of its default assistant behind 1,000 newer ones; counts them all', { timeout: 120_000 }, async () => {
    const { client } = api;
    const owner = `owner-${randomUUID()}`;
    // Oldest: a thread bound to lg-two by a run, one created for lg-two (no run), one of the owner only.
    const bound = await client.threads.create({ metadata: { owner, kind: 'bound' } });
    const done = await client.runs.wait(bound.thread_id, 'lg-two', { input: {} });
    expect(done).toMatchObject({ steps: ['first', 'second'] });
    const forGraph = await client.threads.create({ graphId: 'lg-two', metadata: { owner, kind: 'for-graph' } });
    const plain = await client.threads.create({ metadata: { owner, kind: 'plain', nested: { a: [1] } } });
    // More metadata keys than the index takes for one thread: found through the overflow list.
    const wide = await client.threads.create({ metadata: { owner, kind: 'wide', ...Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i])) } });
    // 1,000 newer threads of others.
    for (let batch = 0; batch < 50; batch += 1) {
      await Promise.all(Array.from({ length: 20 }, (_, i) => client.threads.create({ metadata: { owner: `other-${batch}-${i}` } })));
    }

    const ids = (threads: { thread_id: string }[]) => threads.map((thread) => thread.thread_id);
    expect(ids(await client.threads.search({ metadata: { owner }, limit: 10 }))).toEqual([wide.thread_id, plain.thread_id, forGraph.thread_id, bound.thread_id]);
    expect(await client.threads.count({ metadata: { owner } })).toBe(4);
    expect(ids(await client.threads.search({ metadata: { k7: 7 } }))).toEqual([wide.thread_id]);
    // Paged.
    expect(ids(await client.threads.search({ metadata: { owner }, limit: 2, offset: 2 }))).toEqual([forGraph.thread_id, bound.thread_id]);
    // The rest of the filter is checked on what the index gives: a nested value, a status, sorts.
    expect(ids(await client.threads.search({ metadata: { owner, nested: { a: [1] } } }))).toEqual([plain.thread_id]);
    expect(ids(await client.threads.search({ metadata: { owner, kind: 'bound' }, status: 'idle' }))).toEqual([bound.thread_id]);
    expect(ids(await client.threads.search({ metadata: { owner }, status: 'busy' }))).toEqual([]);
    expect(ids(await client.threads.search({ metadata: { owner }, sortBy: 'thread_id', sortOrder: 'asc' }))).toEqual(
      [bound.thread_id, forGraph.thread_id, plain.thread_id, wide.thread_id].sort(),
    );

    // graph_id: the thread its run bound and the one created for the graph.
    const ofGraph = ids(await client.threads.search({ metadata: { graph_id: 'lg-two' }, limit: 1000 }));
    expect(ofGraph).toContain(bound.thread_id);
    expect(ofGraph).toContain(forGraph.thread_id);
    expect(ofGraph).not.toContain(plain.thread_id);
    expect(ids(await client.threads.search({ metadata: { graph_id: 'lg-two', owner } }))).toEqual([forGraph.thread_id, bound.thread_id]);
    // assistant_id: the graph's default assistant, which the bound thread's run used.
    const assistant = (await client.assistants.search({ graphId: 'lg-two', limit: 1 }))[0]!;
    const ofAssistant = ids(await client.threads.search({ metadata: { assistant_id: assistant.assistant_id }, limit: 1000 }));
    expect(ofAssistant).toContain(bound.thread_id);
    expect(ofAssistant).not.toContain(plain.thread_id);
    expect(await client.threads.count({ metadata: { assistant_id: assistant.assistant_id, owner } })).toBeGreaterThanOrEqual(1);

    // A thread whose metadata changes moves with it; a deleted one is gone.
    await client.threads.update(plain.thread_id, { metadata: { owner: `${owner}-moved` } });
    await client.threads.delete(wide.thread_id);
    expect(ids(await client.threads.search({ metadata: { owner } }))).toEqual([forGraph.thread_id, bound.thread_id]);
    expect(ids(await client.threads.search({ metadata: { owner: `${owner}-moved` } }))).toEqual([plain.thread_id]);
    await client.threads.delete(forGraph.thread_id);
    expect(ids(await client.threads.search({ metadata: { owner } }))).toEqual([bound.thread_id]);
    expect(await client.threads.count({ metadata: { owner } })).toBe(1);
  });

  it('finds every busy thread and every thread paused on an approval, whatever its age; a graph stopped before a node among the newest', { timeout: 120_000 }, async () => {
    const { client } = api;
    const ids = (threads: { thread_id: string }[]) => threads.map((thread) => thread.thread_id);
    // Old: one paused on an interrupt, one whose run holds at a gate.
    const paused = await client.threads.create();
    await client.runs.wait(paused.thread_id, 'lg-review', { input: {} });
    const held = await client.threads.create();
    const waiting = gates.waiting;
    await client.runs.create(held.thread_id, 'lg-gated', { input: { word: 'hold' } });
    await waitFor('the held run at its gate', () => gates.waiting > waiting);
    for (let batch = 0; batch < 50; batch += 1) {
      await Promise.all(Array.from({ length: 20 }, () => client.threads.create()));
    }
    // New: a run stopped before `second` (interrupt_before): interrupted, with no approval.
    const stopped = await client.threads.create();
    await client.runs.wait(stopped.thread_id, 'lg-two', { input: {}, interruptBefore: ['second'] });
    expect((await client.threads.get(stopped.thread_id)).status).toBe('interrupted');

    expect(ids(await client.threads.search({ status: 'interrupted', limit: 10 }))).toEqual([stopped.thread_id, paused.thread_id]);
    expect(await client.threads.count({ status: 'interrupted' })).toBe(2);
    expect(ids(await client.threads.search({ status: 'busy' }))).toEqual([held.thread_id]);
    expect(await client.threads.count({ status: 'busy' })).toBe(1);

    gates.release();
    await waitFor('the held thread idle', async () => (await client.threads.get(held.thread_id)).status === 'idle');
    expect(ids(await client.threads.search({ status: 'busy' }))).toEqual([]);
    expect(ids(await client.threads.search({ status: 'idle', limit: 1000 }))).not.toContain(paused.thread_id);
  });
});
