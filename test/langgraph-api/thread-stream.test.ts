import { randomUUID } from 'node:crypto';
import { Client as Sdk2Client } from '@langchain/langgraph-sdk-2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { startSecuredTenants, tenantKeys, type SecuredTenants } from '../support/langgraph-sdk.js';
import { waitFor } from '../support/wait.js';
import { BACKENDS, gates, testAgents, useLangGraphApi, type Part } from './runs-support.js';

/*
 * GET /threads/{id}/stream through SDK 2.0's `threads.joinStream`: one stream of the thread's
 * runs, the one under way from its start, then every run started after it, each framed as its
 * own run stream and ended by a `run_done` metadata frame, until the client leaves.
 */

/** A thread stream of SDK 2.0, open (its response came), read part by part. */
async function join(
  target: { apiUrl: string; apiKey?: string },
  threadId: string,
  options: { lastEventId?: string; streamMode?: ('run_modes' | 'lifecycle' | 'state_update')[] } = {},
) {
  const controller = new AbortController();
  let opened!: () => void;
  const response = new Promise<void>((resolve) => (opened = resolve));
  // The SDK asks when the stream is first read: its fetch tells when the response came.
  const client = new Sdk2Client({
    apiUrl: target.apiUrl,
    apiKey: target.apiKey ?? null,
    callerOptions: { fetch: (...args: Parameters<typeof fetch>) => fetch(...args).finally(opened) },
  });
  const parts = client.threads.joinStream(threadId, { ...options, signal: controller.signal }) as AsyncGenerator<Part>;
  let pending: Promise<IteratorResult<Part>> | undefined = parts.next();
  pending.catch(() => {});
  await Promise.race([response, pending]);
  const seen: Part[] = [];
  /** The next part, or the end; fails when neither comes. */
  const next = async (): Promise<IteratorResult<Part>> => {
    const read = pending ?? parts.next();
    pending = undefined;
    let timer: NodeJS.Timeout | undefined;
    const result = await Promise.race([
      read,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no further part; saw ${JSON.stringify(seen.map((p) => p.event))}`)), 15_000);
      }),
    ]).finally(() => clearTimeout(timer));
    if (!result.done) seen.push(result.value);
    return result;
  };
  return {
    seen,
    /** Reads parts until one matches, and answers it. */
    async until(match: (part: Part) => boolean): Promise<Part> {
      for (;;) {
        const read = await next();
        if (read.done) throw new Error(`the stream ended; saw ${JSON.stringify(seen)}`);
        if (match(read.value)) return read.value;
      }
    },
    /** Reads the parts left until the stream ends, and answers them. */
    async rest(): Promise<Part[]> {
      const rest: Part[] = [];
      for (let read = await next(); !read.done; read = await next()) rest.push(read.value);
      return rest;
    },
    /** Leaves the stream. */
    close(): void {
      controller.abort();
      (pending ?? parts.next()).catch(() => {});
    },
  };
}

/** How a join fails: the HTTP error's status. */
async function joinFailure(target: { apiUrl: string; apiKey?: string }, threadId: string): Promise<number | undefined> {
  try {
    const stream = await join(target, threadId);
    await stream.until(() => true);
  } catch (error) {
    return (error as { status?: number }).status;
  }
  return undefined;
}

const runDone = (runId: string) => (part: Part) => part.event === 'metadata' && part.data?.status === 'run_done' && part.data?.run_id === runId;

describe.each(BACKENDS)('GET /threads/{id}/stream: a thread joined with SDK 2.0 (%s)', (backend) => {
  const api = useLangGraphApi(backend);
  let client: Sdk2Client;
  let target: { apiUrl: string };
  beforeAll(() => {
    client = new Sdk2Client({ apiUrl: api.app.url, apiKey: null });
    target = { apiUrl: api.app.url };
  });

  it('shows the run under way to its end, then a run started after it on the same connection', async () => {
    const thread = randomUUID();
    const waiting = gates.waiting;
    const first = await client.runs.create(thread, 'lg-gated', { input: { word: 'hold' }, ifNotExists: 'create' });
    await waitFor('the run at its gate', () => gates.waiting > waiting);
    const stream = await join(target, thread);
    try {
      // From its start: its metadata and its first values, though they came before the join.
      expect(await stream.until(() => true)).toMatchObject({ event: 'metadata', data: { run_id: first.run_id, attempt: 1 } });
      await stream.until((part) => part.event === 'values' && part.data?.steps?.includes('a:hold'));
      gates.release();
      await stream.until(runDone(first.run_id));
      const firstParts = stream.seen.splice(0);
      expect(firstParts.map((p) => p.event)).toEqual(['metadata', 'values', 'values', 'values', 'values', 'metadata']);
      expect(firstParts.at(-2)!.data).toEqual({ steps: ['a:hold', 'b:hold', 'c:hold'], word: 'hold' });
      expect(firstParts.filter((p) => p.event === '')).toEqual([]);

      const second = await client.runs.create(thread, 'lg-gated', { input: { word: 'next' }, streamMode: ['values', 'updates'] });
      await stream.until(runDone(second.run_id));
      const secondParts = stream.seen.splice(0);
      expect(secondParts[0]).toMatchObject({ event: 'metadata', data: { run_id: second.run_id, attempt: 1 } });
      expect(secondParts.map((p) => p.event)).toEqual(['metadata', 'values', 'updates', 'values', 'updates', 'values', 'updates', 'values', 'metadata']);
      expect(secondParts[2]!.data).toEqual({ a: { steps: ['a:next'] } });
      expect(secondParts.at(-2)!.data).toEqual({ steps: ['a:hold', 'b:hold', 'c:hold', 'a:next', 'b:next', 'c:next'], word: 'next' });
      for (const part of secondParts) expect(part.id).toMatch(/^\d+-\d+$/);
    } finally {
      stream.close();
    }
  });

  it('a failed run ends with its error, then run_done; a thread with no run under way shows only runs to come', async () => {
    const thread = randomUUID();
    const before = await client.runs.create(thread, 'lg-failing', { input: {}, ifNotExists: 'create' });
    await api.runUntil(before.run_id, 'failed');
    const stream = await join(target, thread);
    try {
      const failed = await client.runs.create(thread, 'lg-failing', { input: {} });
      await stream.until(runDone(failed.run_id));
      expect(stream.seen.map((p) => p.event).filter((event) => event !== 'values')).toEqual(['metadata', 'error', 'metadata']);
      expect(stream.seen[0]!.data.run_id).toBe(failed.run_id);
      expect(stream.seen.at(-2)!.data).toMatchObject({ error: expect.any(String), message: expect.stringContaining('boom') });
    } finally {
      stream.close();
    }
  });

  it('a run paused at an interrupt ends with run_done; the run resuming the thread follows, nothing more of the paused one', async () => {
    const thread = randomUUID();
    await client.threads.create({ threadId: thread });
    const stream = await join(target, thread);
    try {
      const paused = await client.runs.create(thread, 'lg-review', { input: { word: 'p' }, streamMode: ['updates'] });
      await stream.until(runDone(paused.run_id));
      expect(stream.seen.map((p) => p.event)).toEqual(['metadata', 'updates', 'metadata']);
      expect(stream.seen[1]!.data).toEqual({ __interrupt__: [{ value: { question: 'first?' }, id: expect.any(String) }] });
      stream.seen.splice(0);
      const resumed = await client.runs.create(thread, 'lg-review', { command: { resume: 'yes' }, streamMode: ['updates'] });
      await stream.until(runDone(resumed.run_id));
      expect(stream.seen.map((p) => [p.event, p.data.run_id ?? Object.keys(p.data)[0]])).toEqual([
        ['metadata', resumed.run_id],
        ['updates', 'ask'],
        ['updates', '__interrupt__'],
        ['metadata', resumed.run_id],
      ]);
      expect(await api.get(`/api/runs/${paused.run_id}`)).toMatchObject({ body: { status: 'cancelled' } });
    } finally {
      stream.close();
    }
  });

  it('streamMode lifecycle: only each run’s start and end', async () => {
    const thread = randomUUID();
    await client.threads.create({ threadId: thread });
    const stream = await join(target, thread, { streamMode: ['lifecycle'] });
    try {
      const run = await client.runs.create(thread, 'lg-two', { input: { word: 'life' } });
      await stream.until(runDone(run.run_id));
      expect(stream.seen.map((p) => [p.event, p.data])).toEqual([
        ['metadata', { run_id: run.run_id, attempt: 1 }],
        ['metadata', { run_id: run.run_id, status: 'run_done' }],
      ]);
    } finally {
      stream.close();
    }
  });

  it('streamMode state_update alone: no run frames', async () => {
    const thread = randomUUID();
    await client.threads.create({ threadId: thread });
    // Joined first, so live first (its replay's one read went first): the bus hands each event
    // to it before the lifecycle stream.
    const stream = await join(target, thread, { streamMode: ['state_update'] });
    const lifecycle = await join(target, thread, { streamMode: ['lifecycle', 'state_update'] });
    try {
      const run = await client.runs.create(thread, 'lg-two', { input: { word: 'quiet' } });
      await lifecycle.until(runDone(run.run_id));
      // Every event of the run was handed to both streams; whatever the quiet one was sent of
      // them comes before its end, which the server now writes behind it.
      for (const open of api.app.api.deps.streams.streams()) open.end();
      expect(await stream.rest()).toEqual([]);
    } finally {
      stream.close();
      lifecycle.close();
    }
  });

  it('Last-Event-ID: resumes after the given event, the rest of the run and the runs after', async () => {
    const thread = randomUUID();
    await client.threads.create({ threadId: thread });
    const first = await join(target, thread);
    let all: Part[];
    try {
      const run = await client.runs.create(thread, 'lg-gated', { input: { word: 'r1' } });
      await first.until(runDone(run.run_id));
      all = first.seen.slice();
    } finally {
      first.close();
    }
    expect(all.map((p) => p.event)).toEqual(['metadata', 'values', 'values', 'values', 'values', 'metadata']);
    const after = all[2]!;
    const resumed = await join(target, thread, { lastEventId: after.id! });
    try {
      const rest = all.slice(all.findLastIndex((p) => p.id === after.id) + 1);
      expect(rest.length).toBeGreaterThan(0);
      await resumed.until(runDone(all[0]!.data.run_id));
      expect(resumed.seen).toEqual(rest);
      // Still open: the next run comes through.
      const next = await client.runs.create(thread, 'lg-gated', { input: { word: 'r2' } });
      await resumed.until(runDone(next.run_id));
      expect(resumed.seen.slice(rest.length).map((p) => p.event)).toEqual(['metadata', 'values', 'values', 'values', 'values', 'metadata']);
    } finally {
      resumed.close();
    }

    // Resumed in the middle of a run under way: no second metadata of it.
    const waiting = gates.waiting;
    const held = await client.runs.create(thread, 'lg-gated', { input: { word: 'hold' } });
    await waitFor('the run at its gate', () => gates.waiting > waiting);
    const watcher = await join(target, thread);
    try {
      const firstValues = await watcher.until((part) => part.event === 'values' && part.data?.steps?.includes('a:hold'));
      const again = await join(target, thread, { lastEventId: firstValues.id! });
      try {
        gates.release();
        await again.until(runDone(held.run_id));
        expect(again.seen.map((p) => p.event)).toEqual(['values', 'values', 'metadata']);
      } finally {
        again.close();
      }
    } finally {
      watcher.close();
    }
  });

  it('unknown thread: 404; a bad Last-Event-ID: 400', async () => {
    expect(await joinFailure(target, randomUUID())).toBe(404);
    const thread = randomUUID();
    await client.threads.create({ threadId: thread });
    const res = await fetch(`${api.app.url}/threads/${thread}/stream`, { headers: { 'Last-Event-ID': 'nope' } });
    expect(res.status).toBe(400);
    const bad = await fetch(`${api.app.url}/threads/${thread}/stream?stream_mode=values`);
    expect(bad.status).toBe(400);
  });
});

describe.each(BACKENDS)('GET /threads/{id}/stream between tenants (%s)', (backend) => {
  const keys = tenantKeys(`tstream-${backend}`);
  let tenants: SecuredTenants;
  beforeAll(async () => {
    tenants = await startSecuredTenants(backend, { keys, agents: new AgentRegistry(testAgents()) });
  });
  afterAll(async () => {
    await tenants?.close();
  });

  it("another tenant's thread: 404; the owner tenant's viewer may read it", async () => {
    const thread = randomUUID();
    await tenants.a.threads.create({ threadId: thread });
    const url = `${tenants.app.url}/threads/${thread}/stream`;
    const other = await fetch(url, { headers: { 'x-api-key': keys.b } });
    expect(other.status).toBe(404);
    await other.body?.cancel();
    expect(await joinFailure({ apiUrl: tenants.app.url, apiKey: keys.b }, thread)).toBe(404);

    const viewer = await join({ apiUrl: tenants.app.url, apiKey: keys.aViewer }, thread);
    try {
      const run = await tenants.a.runs.create(thread, 'lg-two', { input: { word: 'seen' } });
      await viewer.until(runDone(run.run_id));
      expect(viewer.seen[0]).toMatchObject({ event: 'metadata', data: { run_id: run.run_id } });
    } finally {
      viewer.close();
    }
  });
});
