import { randomUUID } from 'node:crypto';
import { Client as Client2 } from '@langchain/langgraph-sdk-2';
import { describe, expect, it } from 'vitest';
import { BACKENDS, collect, gates, useLangGraphApi } from './runs-support.js';
import { waitFor } from '../support/wait.js';

/*
 * What a client sees of a run it comes to late, as LangGraph's server shows it, through the
 * real SDK clients on both backends: a join of a run's stream without Last-Event-ID replays
 * the run's frames (in the modes it was created with) from its start, whether the run ended or
 * goes on; and a run paused at an interrupt that a later run on its thread took over (a
 * `command.resume`, or new input) lists as `success`, as the later run does.
 */

const ids = (parts: { id?: string; event: string }[]) => parts.map((p) => [p.id, p.event]);

describe.each(BACKENDS)('LangGraph runs joined late, and paused runs taken over (%s)', (backend) => {
  const api = useLangGraphApi(backend);

  it('runs.create of a short run, joinStream once it ended, without an id: its frames from the start, in the modes it was created with', async () => {
    const thread = randomUUID();
    const run = await api.client.runs.create(thread, 'lg-two', { input: { word: 'late' }, streamMode: ['values', 'updates'], ifNotExists: 'create' });
    await api.runUntil(run.run_id, 'completed');

    const joined = await collect(api.client.runs.joinStream(thread, run.run_id));
    expect(joined.map((p) => p.event)).toEqual(['metadata', 'values', 'updates', 'values', 'updates', 'values']);
    expect(joined[0]!.data).toEqual({ run_id: run.run_id, attempt: 1 });
    expect(joined.at(-1)!.data).toEqual({ steps: ['first', 'second'], word: 'late' });
    expect(ids(joined)).toEqual(ids(await collect(api.client.runs.joinStream(thread, run.run_id, { lastEventId: '-1' }))));
    // SDK 2.0 reads the same stream.
    const joined2 = await collect(new Client2({ apiUrl: api.app.url, apiKey: null }).runs.joinStream(thread, run.run_id));
    expect(ids(joined2)).toEqual(ids(joined));
  });

  it('joinStream without an id of a run under way: its frames so far, then the rest until it ends', async () => {
    const thread = randomUUID();
    const before = gates.waiting;
    const run = await api.client.runs.create(thread, 'lg-gated', { input: { word: 'hold' }, streamMode: 'updates', ifNotExists: 'create' });
    await waitFor('the run held at its gate', () => gates.waiting > before);
    const parts: { event: string; data: unknown }[] = [];
    const joined = (async () => {
      for await (const part of api.client.runs.joinStream(thread, run.run_id)) {
        parts.push(part);
        if (part.event === 'updates') gates.release();
      }
    })();
    await joined;
    expect(parts.map((p) => p.event)).toEqual(['metadata', 'updates', 'updates', 'updates']);
    expect(parts.slice(1).map((p) => Object.keys(p.data as object)[0])).toEqual(['a', 'b', 'c']);
  });

  it('a run paused at an interrupt and resumed by a later run (command.resume) lists as success, as the later run does', async () => {
    const thread = randomUUID();
    let first: string | undefined;
    const paused = (await api.client.runs.wait(thread, 'lg-review', { input: { word: 'r' }, ifNotExists: 'create', onRunCreated: (m) => (first = m.run_id) })) as any;
    expect(paused.__interrupt__).toHaveLength(1);
    expect(await api.client.runs.get(thread, first!)).toMatchObject({ status: 'interrupted' });

    let second: string | undefined;
    await api.client.runs.wait(thread, 'lg-review', { command: { resume: 'yes' }, onRunCreated: (m) => (second = m.run_id) });
    let third: string | undefined;
    const done = await api.client.runs.wait(thread, 'lg-review', { command: { resume: 'go' }, onRunCreated: (m) => (third = m.run_id) });
    expect(done).toEqual({ steps: ['first:"yes"', 'second:"go"', 'done'], word: 'r' });

    const listed = await api.client.runs.list(thread);
    expect(listed.map((r) => [r.run_id, r.status])).toEqual([
      [third, 'success'],
      [second, 'success'],
      [first, 'success'],
    ]);
    expect(await api.client.runs.get(thread, first!)).toMatchObject({ status: 'success' });
    expect((await api.client.runs.list(thread, { status: 'success' })).map((r) => r.run_id)).toEqual([third, second, first]);
    expect(await api.client.runs.list(thread, { status: 'interrupted' })).toEqual([]);
    // The native face still says what happened to the paused run: it was ended for the resume.
    expect(await api.get(`/api/runs/${first}`)).toMatchObject({ body: { status: 'cancelled', error: expect.stringMatching(/command\.resume/) } });
  });

  it('a run paused at an interrupt, then a new run with input on its thread: the paused one lists as success', async () => {
    const thread = randomUUID();
    let first: string | undefined;
    await api.client.runs.wait(thread, 'lg-review', { input: { word: 'a' }, ifNotExists: 'create', onRunCreated: (m) => (first = m.run_id) });
    await api.client.runs.wait(thread, 'lg-review', { input: { word: 'b' } });
    expect((await api.client.runs.list(thread)).map((r) => r.status)).toEqual(['interrupted', 'success']);
    expect(await api.client.runs.get(thread, first!)).toMatchObject({ status: 'success' });
  });

  it('a run cancelled while it runs still lists as interrupted', async () => {
    const thread = randomUUID();
    const before = gates.waiting;
    const run = await api.client.runs.create(thread, 'lg-gated', { input: { word: 'hold' }, ifNotExists: 'create' });
    await waitFor('the run held at its gate', () => gates.waiting > before);
    await api.client.runs.cancel(thread, run.run_id, true);
    expect(await api.client.runs.get(thread, run.run_id)).toMatchObject({ status: 'interrupted' });
  });
});
