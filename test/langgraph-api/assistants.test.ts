import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Annotation, END, START, StateGraph, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { Client } from '@langchain/langgraph-sdk';
import { parse as parseUuid, v5 } from '@langchain/core/utils/uuid';
import { builtInAgents } from '../../src/agents/index.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { graphAgent } from '../support/langgraph.js';
import { sdkFailure as failure } from '../support/langgraph-sdk.js';
import { startRedis, type TestRedis } from '../support/redis.js';

/**
 * Stored assistants of the LangGraph Server API through the real `@langchain/langgraph-sdk`
 * Client, on memory and on Redis: their life (create, read, change as versions, set latest,
 * delete), search and count beside the graphs' defaults, runs and crons that take an
 * assistant's config and context, tenants, roles, the caps and bad input.
 */

const defaultIdOf = (graphId: string) => v5(graphId, parseUuid('6ba7b821-9dad-11d1-80b4-00c04fd430c8'));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const KEYS = { a: 'asst-a-user', aViewer: 'asst-a-viewer', b: 'asst-b-user', c: 'asst-c-user' };
/** Assistants one tenant may store, and versions one assistant may have, in these tests. */
const MAX_ASSISTANTS = 6;
const MAX_VERSIONS = 4;

/** Copies what its run was configured with into its state: `configurable.style` and `context.tone`. */
const reflect = new StateGraph(Annotation.Root({ style: Annotation<string>, tone: Annotation<string> }))
  .addNode('read', (_state, config: LangGraphRunnableConfig) => ({
    style: String(config.configurable?.style ?? 'none'),
    tone: String((config.context as { tone?: string } | undefined)?.tone ?? 'none'),
  }))
  .addEdge(START, 'read')
  .addEdge('read', END)
  .compile();

const agents = () => new AgentRegistry([...builtInAgents, graphAgent('lg-reflect', reflect, ['read'])]);
const DEFAULTS = builtInAgents.length + 1;

describe.each(['memory', 'redis'] as const)('LangGraph SDK: stored assistants on %s', (backend) => {
  let redis: TestRedis | undefined;
  let app: TestApi;
  let a: Client;
  let aViewer: Client;
  let b: Client;
  let c: Client;

  beforeAll(async () => {
    if (backend === 'redis') redis = await startRedis();
    app = await startTestApi({
      agents: agents(),
      secured: true,
      ...(redis ? { redisUrl: redis.url } : {}),
      env: {
        SERVICE_AUTH: 'apikey',
        SERVICE_RBAC: 'true',
        SERVICE_API_KEYS: `${KEYS.a}:user:TenantA,${KEYS.aViewer}:viewer:TenantA,${KEYS.b}:user:TenantB,${KEYS.c}:user:TenantC`,
        SERVICE_ASSISTANTS_MAX: String(MAX_ASSISTANTS),
        SERVICE_ASSISTANT_VERSIONS_MAX: String(MAX_VERSIONS),
      },
    });
    expect(app.backend.mode).toBe(backend);
    app.composition.startExecuting();
    const client = (apiKey: string) => new Client({ apiUrl: app.url, apiKey, callerOptions: { maxRetries: 0 } });
    a = client(KEYS.a);
    aViewer = client(KEYS.aViewer);
    b = client(KEYS.b);
    c = client(KEYS.c);
  });
  afterAll(async () => {
    await app?.close();
    await redis?.stop();
  });

  it('creates, reads, changes as versions, sets a version latest and deletes an assistant', async () => {
    const created = await a.assistants.create({
      graphId: 'lg-reflect',
      name: 'terse',
      description: 'short answers',
      config: { configurable: { style: 'terse' } },
      context: { tone: 'dry' },
      metadata: { team: 'docs' },
    });
    expect(created).toEqual({
      assistant_id: expect.stringMatching(UUID),
      graph_id: 'lg-reflect',
      name: 'terse',
      description: 'short answers',
      config: { configurable: { style: 'terse' } },
      context: { tone: 'dry' },
      metadata: { team: 'docs' },
      version: 1,
      created_at: expect.any(String),
      updated_at: created.created_at,
    });
    const id = created.assistant_id;
    expect(await a.assistants.get(id)).toEqual(created);

    const second = await a.assistants.update(id, { metadata: { owner: 'ann' }, config: { configurable: { style: 'long' } } });
    expect(second).toMatchObject({
      version: 2,
      name: 'terse',
      config: { configurable: { style: 'long' } },
      context: { tone: 'dry' },
      metadata: { team: 'docs', owner: 'ann' },
      created_at: created.created_at,
    });
    expect(Date.parse(second.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));
    expect((await a.assistants.update(id, {})).version).toBe(3);
    expect(await a.assistants.get(id)).toMatchObject({ version: 3, config: { configurable: { style: 'long' } } });

    const versions = await a.assistants.getVersions(id);
    expect(versions.map((v) => v.version)).toEqual([3, 2, 1]);
    expect(versions[2]).toEqual({ ...created, updated_at: undefined });
    expect((await a.assistants.getVersions(id, { limit: 1, offset: 1 })).map((v) => v.version)).toEqual([2]);
    expect((await a.assistants.getVersions(id, { metadata: { owner: 'ann' } })).map((v) => v.version)).toEqual([3, 2]);

    const back = await a.assistants.setLatest(id, 1);
    expect(back).toMatchObject({ version: 1, config: { configurable: { style: 'terse' } }, metadata: { team: 'docs' }, created_at: created.created_at });
    expect(await a.assistants.get(id)).toEqual(back);
    // The next change is the highest version + 1, from the latest (version 1).
    expect(await a.assistants.update(id, { name: 'terse again' })).toMatchObject({ version: 4, name: 'terse again', metadata: { team: 'docs' } });
    expect((await failure(a.assistants.setLatest(id, 9))).status).toBe(404);

    await a.assistants.delete(id);
    for (const gone of [() => a.assistants.get(id), () => a.assistants.getVersions(id), () => a.assistants.delete(id), () => a.assistants.update(id, {})]) {
      const { status, body } = await failure(gone);
      expect(status).toBe(404);
      expect(body.detail).toBe(body.error.message);
    }
  });

  it('answers if_exists: raise is 409, do_nothing answers the existing assistant (a stored one or a default)', async () => {
    const assistantId = randomUUID();
    const first = await a.assistants.create({ graphId: 'lg-reflect', assistantId, name: 'first' });
    expect(first.assistant_id).toBe(assistantId);
    const raised = await failure(a.assistants.create({ graphId: 'lg-reflect', assistantId, name: 'second' }));
    expect(raised.status).toBe(409);
    expect(raised.body.error.code).toBe('conflict');
    expect(await a.assistants.create({ graphId: 'lg-reflect', assistantId, name: 'second', ifExists: 'do_nothing' })).toEqual(first);
    expect((await a.assistants.getVersions(assistantId)).map((v) => v.version)).toEqual([1]);

    const taken = defaultIdOf('lg-reflect');
    expect((await failure(a.assistants.create({ graphId: 'lg-reflect', assistantId: taken }))).status).toBe(409);
    expect(await a.assistants.create({ graphId: 'lg-reflect', assistantId: taken, ifExists: 'do_nothing' })).toMatchObject({ assistant_id: taken, metadata: { created_by: 'system' } });
    await a.assistants.delete(assistantId);
  });

  it('searches and counts the stored assistants beside the defaults: graph, name part, metadata containment, sorted, paged, selected', async () => {
    const suite = randomUUID();
    const alpha = await a.assistants.create({ graphId: 'lg-reflect', name: 'Alpha helper', metadata: { suite, tags: ['x', 'y'], level: { n: 1 } } });
    const beta = await a.assistants.create({ graphId: 'lg-reflect', name: 'beta', metadata: { suite } });
    try {
      expect(await a.assistants.count()).toBe(DEFAULTS + 2);
      expect((await a.assistants.search({ metadata: { suite }, sortBy: 'name', sortOrder: 'asc' })).map((x) => x.name)).toEqual(['Alpha helper', 'beta']);
      expect((await a.assistants.search({ metadata: { tags: ['y'], level: { n: 1 } } })).map((x) => x.assistant_id)).toEqual([alpha.assistant_id]);
      expect((await a.assistants.search({ name: 'HELP' })).map((x) => x.assistant_id)).toEqual([alpha.assistant_id]);
      const ofGraph = await a.assistants.search({ graphId: 'lg-reflect', sortBy: 'created_at', sortOrder: 'desc' });
      expect(ofGraph.map((x) => x.assistant_id)).toEqual([beta.assistant_id, alpha.assistant_id, defaultIdOf('lg-reflect')]);
      expect(await a.assistants.count({ graphId: 'lg-reflect' })).toBe(3);
      expect(await a.assistants.count({ metadata: { suite } })).toBe(2);
      expect(await a.assistants.count({ metadata: { created_by: 'system' } })).toBe(DEFAULTS);

      const page = await a.assistants.search({ graphId: 'lg-reflect', sortBy: 'assistant_id', sortOrder: 'asc', limit: 2, offset: 0, includePagination: true });
      expect(page.assistants.map((x) => x.assistant_id)).toEqual([alpha.assistant_id, beta.assistant_id, defaultIdOf('lg-reflect')].sort().slice(0, 2));
      expect(page.next).toBe('2');
      expect(await a.assistants.search({ metadata: { suite }, select: ['assistant_id', 'version'], sortBy: 'name', sortOrder: 'desc' })).toEqual([
        { assistant_id: beta.assistant_id, version: 1 },
        { assistant_id: alpha.assistant_id, version: 1 },
      ]);
    } finally {
      await a.assistants.delete(alpha.assistant_id);
      await a.assistants.delete(beta.assistant_id);
    }
  });

  it("runs a stored assistant with its config and context under the run's own, and records it on the run and its thread", async () => {
    const assistant = await a.assistants.create({ graphId: 'lg-reflect', config: { configurable: { style: 'terse' } }, context: { tone: 'dry' } });
    const id = assistant.assistant_id;
    try {
      const thread = await a.threads.create();
      expect(await a.runs.wait(thread.thread_id, id, { input: {} })).toEqual({ style: 'terse', tone: 'dry' });
      const [run] = await a.runs.list(thread.thread_id);
      expect(run).toMatchObject({ assistant_id: id, status: 'success' });
      expect((await a.threads.get(thread.thread_id)).metadata).toMatchObject({ graph_id: 'lg-reflect', assistant_id: id });
      expect((await a.threads.search({ metadata: { assistant_id: id } })).map((t) => t.thread_id)).toEqual([thread.thread_id]);

      // The run's values win: configurable key by key, context key by key.
      expect(await a.runs.wait(thread.thread_id, id, { input: {}, config: { configurable: { style: 'chatty' } } })).toMatchObject({ style: 'chatty', tone: 'dry' });
      expect(await a.runs.wait(thread.thread_id, id, { input: {}, context: { tone: 'warm' } })).toMatchObject({ style: 'terse', tone: 'warm' });
      // The graph's default assistant has none of them; the thread then names it.
      expect(await a.runs.wait(thread.thread_id, 'lg-reflect', { input: {} })).toMatchObject({ style: 'none', tone: 'none' });
      expect((await a.threads.get(thread.thread_id)).metadata).toMatchObject({ assistant_id: defaultIdOf('lg-reflect') });

      // A new version is what the next run gets; a stateless run too.
      await a.assistants.update(id, { config: { configurable: { style: 'v2' } } });
      expect(await a.runs.wait(null, id, { input: {} })).toMatchObject({ style: 'v2', tone: 'dry' });
      const created = await a.runs.create(thread.thread_id, id, { input: {}, metadata: { by: 'test' } });
      expect(created).toMatchObject({ assistant_id: id, metadata: { by: 'test' } });
      await a.runs.join(thread.thread_id, created.run_id);
      expect((await a.runs.get(thread.thread_id, created.run_id)).assistant_id).toBe(id);
    } finally {
      await a.assistants.delete(id);
    }
  });

  it('makes a cron of a stored assistant with its config and context, and names the assistant', async () => {
    const assistant = await a.assistants.create({ graphId: 'lg-reflect', config: { configurable: { style: 'cron' } }, context: { tone: 'calm' } });
    try {
      const cron = await a.crons.create(assistant.assistant_id, { schedule: '0 9 * * *', input: {}, config: { tags: ['daily'] } });
      expect(cron.assistant_id).toBe(assistant.assistant_id);
      expect(cron.payload).toMatchObject({ config: { tags: ['daily'], configurable: { style: 'cron' } }, context: { tone: 'calm' } });
      expect((await a.crons.search({ assistantId: assistant.assistant_id })).map((x) => x.cron_id)).toEqual([cron.cron_id]);
      await a.crons.delete(cron.cron_id);
    } finally {
      await a.assistants.delete(assistant.assistant_id);
    }
  });

  it("deletes an assistant's threads with delete_threads=true, and leaves them otherwise", async () => {
    const kept = await a.assistants.create({ graphId: 'lg-reflect' });
    const dropped = await a.assistants.create({ graphId: 'lg-reflect' });
    const keptThread = await a.threads.create();
    const droppedThread = await a.threads.create();
    const otherThread = await a.threads.create();
    await a.runs.wait(keptThread.thread_id, kept.assistant_id, { input: {} });
    await a.runs.wait(droppedThread.thread_id, dropped.assistant_id, { input: {} });
    await a.runs.wait(otherThread.thread_id, 'lg-reflect', { input: {} });

    await a.assistants.delete(kept.assistant_id);
    expect((await a.threads.get(keptThread.thread_id)).metadata).toMatchObject({ assistant_id: kept.assistant_id });
    await a.assistants.delete(dropped.assistant_id, { deleteThreads: true });
    expect((await failure(a.threads.get(droppedThread.thread_id))).status).toBe(404);
    expect((await a.threads.get(otherThread.thread_id)).thread_id).toBe(otherThread.thread_id);
    // A run on a deleted assistant: 404.
    expect((await failure(a.runs.wait(keptThread.thread_id, kept.assistant_id, { input: {} }))).status).toBe(404);
  });

  it("keeps tenant B out of tenant A's assistants (404, never listed), and lets a viewer read but not write (403)", async () => {
    const mine = await a.assistants.create({ graphId: 'lg-reflect', name: 'private', metadata: { owner: 'A' } });
    const id = mine.assistant_id;
    try {
      for (const attempt of [
        () => b.assistants.get(id),
        () => b.assistants.update(id, { name: 'taken' }),
        () => b.assistants.delete(id),
        () => b.assistants.getVersions(id),
        () => b.assistants.setLatest(id, 1),
        () => b.assistants.getGraph(id),
        () => b.runs.wait(null, id, { input: {} }),
      ]) {
        expect((await failure(attempt)).status).toBe(404);
      }
      expect(await b.assistants.search({ metadata: { owner: 'A' } })).toEqual([]);
      expect(await b.assistants.count()).toBe(DEFAULTS);
      // B may store an assistant with the same id: ids are per tenant.
      await b.assistants.create({ graphId: 'lg-reflect', assistantId: id, name: 'B own' });
      expect((await a.assistants.get(id)).name).toBe('private');
      await b.assistants.delete(id);

      expect(await aViewer.assistants.get(id)).toEqual(mine);
      expect(await aViewer.assistants.search({ metadata: { owner: 'A' } })).toHaveLength(1);
      expect(await aViewer.assistants.getVersions(id)).toHaveLength(1);
      for (const write of [
        () => aViewer.assistants.create({ graphId: 'lg-reflect' }),
        () => aViewer.assistants.update(id, { name: 'viewer' }),
        () => aViewer.assistants.setLatest(id, 1),
        () => aViewer.assistants.delete(id),
      ]) {
        const { status, body } = await failure(write);
        expect(status).toBe(403);
        expect(body.error.code).toBe('forbidden');
      }
      expect(await a.assistants.get(id)).toEqual(mine);
    } finally {
      await a.assistants.delete(id);
    }
  });

  it("refuses assistants past the tenant's cap and versions past the assistant's cap (413), storing nothing", async () => {
    const made = [];
    for (let i = 0; i < MAX_ASSISTANTS; i += 1) made.push(await c.assistants.create({ graphId: 'lg-reflect', name: `n${i}` }));
    const full = await failure(c.assistants.create({ graphId: 'lg-reflect', name: 'one too many' }));
    expect(full.status).toBe(413);
    expect(full.body.error.code).toBe('payload_too_large');
    expect(full.body.detail).toMatch(/SERVICE_ASSISTANTS_MAX/);
    expect(await c.assistants.count({ name: 'one too many' })).toBe(0);
    expect(await c.assistants.count()).toBe(DEFAULTS + MAX_ASSISTANTS);
    // Another tenant is not held by C's cap.
    const elsewhere = await b.assistants.create({ graphId: 'lg-reflect' });
    await b.assistants.delete(elsewhere.assistant_id);

    const first = made[0]!.assistant_id;
    for (let v = 2; v <= MAX_VERSIONS; v += 1) expect((await c.assistants.update(first, { metadata: { v } })).version).toBe(v);
    const tooMany = await failure(c.assistants.update(first, { name: 'past the cap' }));
    expect(tooMany.status).toBe(413);
    expect(tooMany.body.detail).toMatch(/SERVICE_ASSISTANT_VERSIONS_MAX/);
    expect(await c.assistants.get(first)).toMatchObject({ version: MAX_VERSIONS, name: 'n0' });
    expect(await c.assistants.getVersions(first)).toHaveLength(MAX_VERSIONS);
    // Setting a version latest adds none: allowed at the cap.
    expect((await c.assistants.setLatest(first, 2)).version).toBe(2);

    await c.assistants.delete(made[1]!.assistant_id);
    expect((await c.assistants.create({ graphId: 'lg-reflect', name: 'room again' })).name).toBe('room again');
  });

  it('refuses bad input with 400 (or 404 for an unknown graph, 413 past 64 KiB) and stores nothing', async () => {
    const post = (json: unknown) => call(`${app.url}/assistants`, { method: 'POST', headers: { 'X-Api-Key': KEYS.a }, json });
    for (const json of [
      {},
      { graph_id: 'lg-reflect', assistant_id: 'not-a-uuid' },
      { graph_id: 'lg-reflect', config: 'fast' },
      { graph_id: 'lg-reflect', config: { recursion_limit: 0 } },
      { graph_id: 'lg-reflect', context: [1, 2] },
      { graph_id: 'lg-reflect', metadata: 'x' },
      { graph_id: 'lg-reflect', if_exists: 'replace' },
      { graph_id: 'lg-reflect', unknown: true },
      { graph_id: 'echo' },
    ]) {
      const answer = await post(json);
      expect(answer.status, JSON.stringify(json)).toBe(400);
      expect(answer.body.detail).toBe(answer.body.error.message);
    }
    expect((await post({ graph_id: 'no-such-graph' })).status).toBe(404);
    expect((await post({ graph_id: 'lg-reflect', metadata: { blob: 'x'.repeat(70 * 1024) } })).status).toBe(413);
    expect(await a.assistants.count()).toBe(DEFAULTS);

    const stored = await a.assistants.create({ graphId: 'lg-reflect' });
    try {
      const patch = (json: unknown) => call(`${app.url}/assistants/${stored.assistant_id}`, { method: 'PATCH', headers: { 'X-Api-Key': KEYS.a }, json });
      expect((await patch({ graph_id: 'echo' })).status).toBe(400);
      expect((await patch({ graph_id: 'no-such-graph' })).status).toBe(404);
      expect((await patch({ version: 3 })).status).toBe(400);
      const latest = await call(`${app.url}/assistants/${stored.assistant_id}/latest`, { method: 'POST', headers: { 'X-Api-Key': KEYS.a }, json: { version: 0 } });
      expect(latest.status).toBe(400);
      expect((await a.assistants.getVersions(stored.assistant_id)).map((v) => v.version)).toEqual([1]);
    } finally {
      await a.assistants.delete(stored.assistant_id);
    }
  });
});
