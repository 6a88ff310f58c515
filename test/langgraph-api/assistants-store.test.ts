import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Annotation, END, START, StateGraph, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { Client } from '@langchain/langgraph-sdk';
import { parse as parseUuid, v5 } from '@langchain/core/utils/uuid';
import { z } from 'zod';
import { builtInAgents } from '../../src/agents/index.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { MAX_STORE_ITEM_KEY_BYTES } from '../../src/runtime/graph-item-queries.js';
import { call, type TestApi } from '../support/app.js';
import { graphAgent } from '../support/langgraph.js';
import { sdkFailure as failure, startSecuredTenants, tenantKeys, type SecuredTenants } from '../support/langgraph-sdk.js';

/**
 * The assistants, store and meta routes of the LangGraph Server API, driven by the real
 * `@langchain/langgraph-sdk` Client against agentplane on memory and on Redis, with API keys
 * of two tenants (tenant A: a user and a viewer key; tenant B: a user key; tenant C: a user
 * key for the byte cap).
 */

/** How the LangGraph server names a graph's assistant: UUIDv5 of the graph id in its namespace. */
const assistantIdOf = (graphId: string) => v5(graphId, parseUuid('6ba7b821-9dad-11d1-80b4-00c04fd430c8'));

const KEYS = { ...tenantKeys('lgsdk'), c: 'lgsdk-c-user' };
/** Tenant C's store holds at most this many bytes (as every tenant's here: room for an item with the longest namespace and key). */
const CAP_BYTES = 16 * 1024;

/** agent ⇄ tool until `turns` reaches 2, as the LangGraph server's test graph is drawn. */
const chat = new StateGraph(Annotation.Root({ turns: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }), topic: Annotation<string> }))
  .addNode('agent', () => ({ turns: 1 }))
  .addNode('tool', () => ({}))
  .addEdge(START, 'agent')
  .addConditionalEdges('agent', (state) => (state.turns < 2 ? 'tool' : END), ['tool', END])
  .addEdge('tool', 'agent')
  .compile();

/** A graph with a Zod state: its schemas are the Zod schema's. */
const counter = new StateGraph(z.object({ items: z.array(z.string()), counter: z.number() }))
  .addNode('count', (state) => ({ counter: state.items.length }))
  .addEdge(START, 'count')
  .addEdge('count', END)
  .compile();

/** Writes the run's input `note` into the store of the tenant running it (config.store). */
const remember = new StateGraph(Annotation.Root({ note: Annotation<string> }))
  .addNode('save', async (state, config: LangGraphRunnableConfig) => {
    await config.store!.put(['notes', 'graph'], 'latest', { note: state.note });
    return {};
  })
  .addEdge(START, 'save')
  .addEdge('save', END)
  .compile();

const GRAPH_IDS = ['lg-chat', 'lg-counter', 'lg-remember'];
const agents = () =>
  new AgentRegistry([...builtInAgents, graphAgent('lg-chat', chat, ['agent', 'tool']), graphAgent('lg-counter', counter, ['count']), graphAgent('lg-remember', remember, ['save'])]);
const ALL_IDS = [...builtInAgents.map((a) => a.id), ...GRAPH_IDS].sort();

describe.each(['memory', 'redis'] as const)('LangGraph SDK: assistants and store on %s', (backend) => {
  let tenants: SecuredTenants | undefined;
  let app: TestApi;
  let a: Client;
  let aViewer: Client;
  let b: Client;

  beforeAll(async () => {
    tenants = await startSecuredTenants(backend, { keys: KEYS, agents: agents(), moreKeys: `${KEYS.c}:user:TenantC`, env: { SERVICE_LANGGRAPH_STORE_MAX_BYTES: String(CAP_BYTES) } });
    ({ app, a, aViewer, b } = tenants);
  });
  afterAll(async () => {
    await tenants?.close();
  });

  describe('assistants', () => {
    it('lists every agent and graph as an assistant, with the id the LangGraph server derives', async () => {
      const found = await a.assistants.search({ limit: 100 });
      expect(found.map((x) => x.graph_id).sort()).toEqual(ALL_IDS);
      for (const assistant of found) {
        expect(assistant).toEqual({
          assistant_id: assistantIdOf(assistant.graph_id),
          graph_id: assistant.graph_id,
          name: assistant.graph_id,
          description: expect.any(String),
          config: {},
          context: {},
          metadata: { created_by: 'system' },
          version: 1,
          created_at: found[0]!.created_at,
          updated_at: found[0]!.created_at,
        });
      }
      expect(Number.isNaN(Date.parse(found[0]!.created_at))).toBe(false);
      expect(await a.assistants.count()).toBe(ALL_IDS.length);
    });

    it('filters by graph id, name and metadata, pages, sorts and selects fields', async () => {
      expect((await a.assistants.search({ graphId: 'lg-chat' })).map((x) => x.assistant_id)).toEqual([assistantIdOf('lg-chat')]);
      expect((await a.assistants.search({ name: 'LG-C', limit: 100 })).map((x) => x.graph_id).sort()).toEqual(['lg-chat', 'lg-counter']);
      expect(await a.assistants.search({ metadata: { created_by: 'system' }, limit: 100 })).toHaveLength(ALL_IDS.length);
      expect(await a.assistants.search({ metadata: { created_by: 'someone' } })).toEqual([]);
      expect(await a.assistants.count({ graphId: 'echo' })).toBe(1);
      expect(await a.assistants.count({ metadata: { created_by: 'someone' } })).toBe(0);

      const asc = await a.assistants.search({ sortBy: 'graph_id', sortOrder: 'asc', limit: 2, offset: 1, includePagination: true });
      expect(asc.assistants.map((x) => x.graph_id)).toEqual(ALL_IDS.slice(1, 3));
      expect(asc.next).toBe('3');
      const desc = await a.assistants.search({ sortBy: 'name', sortOrder: 'desc', limit: 100, includePagination: true });
      expect(desc.assistants.map((x) => x.graph_id)).toEqual([...ALL_IDS].reverse());
      expect(desc.next).toBeNull();

      const selected = await a.assistants.search({ graphId: 'echo', select: ['assistant_id', 'graph_id'] });
      expect(selected).toEqual([{ assistant_id: assistantIdOf('echo'), graph_id: 'echo' }]);
    });

    it('answers an assistant by its id and by its graph id everywhere', async () => {
      for (const graphId of ['lg-chat', 'human-review']) {
        const byId = await a.assistants.get(assistantIdOf(graphId));
        expect(byId.graph_id).toBe(graphId);
        expect(await a.assistants.get(graphId)).toEqual(byId);
        expect(await a.assistants.getGraph(graphId)).toEqual(await a.assistants.getGraph(assistantIdOf(graphId)));
        expect(await a.assistants.getSchemas(graphId)).toEqual(await a.assistants.getSchemas(assistantIdOf(graphId)));
        expect(await a.assistants.getSubgraphs(graphId)).toEqual({});
        expect(await a.assistants.getVersions(graphId)).toEqual([expect.objectContaining({ assistant_id: assistantIdOf(graphId), version: 1 })]);
      }
      const missing = await failure(a.assistants.get(randomUUID()));
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ error: { code: 'not_found', message: expect.stringMatching(/^Assistant ".+" was not found\.$/) }, detail: missing.body.error.message });
    });

    it("draws a graph agent from its compiled graph and a native agent from its nodes and edges", async () => {
      const drawn = await a.assistants.getGraph('lg-chat');
      expect(drawn.nodes).toEqual([
        expect.objectContaining({ id: '__start__', type: 'schema' }),
        expect.objectContaining({ id: 'agent', type: 'runnable', data: expect.objectContaining({ name: 'agent' }) }),
        expect.objectContaining({ id: 'tool', type: 'runnable', data: expect.objectContaining({ name: 'tool' }) }),
        expect.objectContaining({ id: '__end__', type: 'schema' }),
      ]);
      expect(drawn.edges).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ source: '__start__', target: 'agent', conditional: false }),
          expect.objectContaining({ source: 'tool', target: 'agent', conditional: false }),
          expect.objectContaining({ source: 'agent', target: 'tool', conditional: true }),
          expect.objectContaining({ source: 'agent', target: '__end__', conditional: true }),
        ]),
      );
      expect(drawn.edges).toHaveLength(4);

      const review = await a.assistants.getGraph('human-review', { xray: true });
      expect(review.nodes.map((n) => [n.id, (n as { type?: string }).type])).toEqual([
        ['__start__', 'schema'],
        ['draft', 'runnable'],
        ['review', 'runnable'],
        ['publish', 'runnable'],
        ['discard', 'runnable'],
        ['__end__', 'schema'],
      ]);
      const edges = review.edges.map((e) => `${e.source}${e.conditional ? ' ?> ' : ' -> '}${e.target}`);
      expect(edges).toEqual([
        '__start__ -> draft',
        'draft -> review',
        'review ?> draft',
        'review ?> publish',
        'review ?> discard',
        'review ?> __end__',
        'publish -> __end__',
        'discard -> __end__',
      ]);
    });

    it("gives the schemas a graph declares: Zod's, an Annotation's channels, {} for a native agent", async () => {
      const zod = await a.assistants.getSchemas('lg-counter');
      expect(zod.graph_id).toBe('lg-counter');
      for (const schema of [zod.state_schema, zod.input_schema, zod.output_schema]) {
        expect(schema).toMatchObject({ type: 'object', properties: { items: { type: 'array', items: { type: 'string' } }, counter: { type: 'number' } } });
      }
      const annotation = await a.assistants.getSchemas('lg-chat');
      expect(annotation.state_schema).toEqual({ type: 'object', properties: { turns: {}, topic: {} } });
      expect(annotation.input_schema).toEqual(annotation.state_schema);
      expect(annotation.config_schema).toBeNull();
      expect(await a.assistants.getSchemas('echo')).toEqual({
        graph_id: 'echo',
        state_schema: {},
        input_schema: {},
        output_schema: {},
        config_schema: null,
        context_schema: null,
      });
    });

    it("refuses to change or delete a graph's default assistant (409 with detail), and stored assistants of a defineAgent agent (400)", async () => {
      for (const attempt of [() => a.assistants.update('echo', { name: 'renamed' }), () => a.assistants.delete(assistantIdOf('lg-chat'))]) {
        const refused = await failure(attempt);
        expect(refused.status).toBe(409);
        expect(refused.body.error.code).toBe('conflict');
        expect(refused.body.detail).toMatch(/^Assistant ".+" is the default assistant of graph ".+" \(created_by system\): it cannot be (changed|deleted); create an assistant of the graph instead\.$/);
      }
      const native = await failure(a.assistants.create({ graphId: 'echo', name: 'mine' }));
      expect(native.status).toBe(400);
      expect(native.body.detail).toMatch(/^graph_id: "echo" is a defineAgent agent, not a graph/);
      expect((await failure(a.assistants.delete('no-such-graph'))).status).toBe(404);
      expect((await a.assistants.get('echo')).name).toBe('echo');
      expect(await a.assistants.count()).toBe(ALL_IDS.length);
    });
  });

  describe('store', () => {
    it('puts, gets, searches, lists and deletes items', async () => {
      const ns = ['users', `u-${randomUUID().slice(0, 8)}`];
      expect(await a.store.getItem(ns, 'prefs')).toBeNull();
      await a.store.putItem(ns, 'prefs', { theme: 'dark', size: 3 });
      await a.store.putItem([...ns, 'docs'], 'd1', { kind: 'doc', size: 10 });
      await a.store.putItem([...ns, 'docs'], 'd2', { kind: 'doc', size: 20 });

      const got = await a.store.getItem(ns, 'prefs');
      expect(got).toMatchObject({ namespace: ns, key: 'prefs', value: { theme: 'dark', size: 3 } });
      expect(got!.createdAt).toBe(got!.updatedAt);

      await a.store.putItem(ns, 'prefs', { theme: 'light', size: 3 });
      const updated = await a.store.getItem(ns, 'prefs');
      expect(updated).toMatchObject({ value: { theme: 'light', size: 3 }, createdAt: got!.createdAt });
      expect(Date.parse(updated!.updatedAt)).toBeGreaterThanOrEqual(Date.parse(got!.createdAt));

      const all = await a.store.searchItems(ns);
      expect(all.items.map((i) => [i.namespace.join('/'), i.key])).toEqual([
        [ns.join('/'), 'prefs'],
        [`${ns.join('/')}/docs`, 'd1'],
        [`${ns.join('/')}/docs`, 'd2'],
      ]);
      expect(all.items[0]).toMatchObject({ value: { theme: 'light', size: 3 }, createdAt: got!.createdAt });
      expect((await a.store.searchItems(ns, { filter: { kind: 'doc' } })).items.map((i) => i.key)).toEqual(['d1', 'd2']);
      expect((await a.store.searchItems(ns, { filter: { size: { $gt: 5, $lt: 15 } } })).items.map((i) => i.key)).toEqual(['d1']);
      expect((await a.store.searchItems(ns, { limit: 1, offset: 1 })).items.map((i) => i.key)).toEqual(['d1']);
      expect((await a.store.searchItems(ns, { query: 'ignored without an index' })).items).toHaveLength(3);

      expect((await a.store.listNamespaces({ prefix: ns })).namespaces).toEqual([ns, [...ns, 'docs']]);
      expect((await a.store.listNamespaces({ prefix: ['users', '*'], suffix: ['docs'] })).namespaces).toContainEqual([...ns, 'docs']);
      expect((await a.store.listNamespaces({ prefix: ns, maxDepth: 2 })).namespaces).toEqual([ns]);
      expect((await a.store.listNamespaces({ prefix: ns, limit: 1, offset: 1 })).namespaces).toEqual([[...ns, 'docs']]);

      await a.store.deleteItem(ns, 'prefs');
      await a.store.deleteItem(ns, 'never-there');
      expect(await a.store.getItem(ns, 'prefs')).toBeNull();
      expect((await a.store.searchItems(ns)).items.map((i) => i.key)).toEqual(['d1', 'd2']);
    });

    it("is the store graphs read and write through config.store, the running tenant's", async () => {
      const run = await call(`${app.url}/api/runs/wait`, {
        method: 'POST',
        headers: { 'X-Api-Key': KEYS.a },
        json: { agent_id: 'lg-remember', input: { note: 'from the graph' } },
      });
      expect(run.status, JSON.stringify(run.body)).toBe(200);
      expect(run.body.status).toBe('completed');
      expect(await a.store.getItem(['notes', 'graph'], 'latest')).toMatchObject({ value: { note: 'from the graph' } });
      expect(await b.store.getItem(['notes', 'graph'], 'latest')).toBeNull();
    });

    it('refuses namespaces LangGraph refuses, a ttl and a value that is not an object, with detail and nothing written', async () => {
      const refusals = [
        () => a.store.putItem(['has:colon'], 'k', { v: 1 }),
        () => a.store.putItem(['langgraph', 'reserved'], 'k', { v: 1 }),
        () => a.store.putItem([], 'k', { v: 1 }),
        () => a.store.putItem(['ok'], 'k', { v: 1 }, { ttl: 5 }),
        () => a.store.putItem(['ok'], 'k', ['not', 'an', 'object'] as never),
      ];
      for (const refused of refusals) {
        const { status, body } = await failure(refused);
        expect(status).toBe(400);
        expect(body).toEqual({ error: { code: 'bad_request', message: expect.any(String) }, detail: body.error.message });
      }
      expect(await a.store.getItem(['ok'], 'k')).toBeNull();
      expect((await a.store.listNamespaces({ prefix: ['ok'] })).namespaces).toEqual([]);
    });

    it('refuses at PUT a namespace and key past what a GET carries in its URL (400 with detail, nothing written); the largest round-trips', async () => {
      // Both in UTF-8 bytes, the namespace's labels joined with "." as GET /store/items sends them.
      const bytes = (namespace: string[], key: string) => Buffer.byteLength(`${namespace.join('.')}${key}`);
      const namespace = ['long', '€'.repeat(1000)];
      const key = `k${'€'.repeat(Math.floor((MAX_STORE_ITEM_KEY_BYTES - bytes(namespace, 'k')) / 3))}`;
      const largest = `${key}${'x'.repeat(MAX_STORE_ITEM_KEY_BYTES - bytes(namespace, key))}`;
      expect(bytes(namespace, largest)).toBe(MAX_STORE_ITEM_KEY_BYTES);
      await a.store.putItem(namespace, largest, { v: 'largest' });
      expect(await a.store.getItem(namespace, largest)).toMatchObject({ namespace, key: largest, value: { v: 'largest' } });

      for (const [what, ns, k] of [
        ['one byte more', namespace, `${largest}x`],
        ['a 16 KiB key', ['long'], 'k'.repeat(16 * 1024)],
        ['a 16 KiB namespace', ['long', 'n'.repeat(16 * 1024)], 'k'],
      ] as const) {
        const { status, body } = await failure(a.store.putItem([...ns], k, { v: 1 }));
        expect({ what, status, code: body.error.code }).toEqual({ what, status: 400, code: 'bad_request' });
        expect(body.detail).toMatch(new RegExp(`^body\\.key: .*${MAX_STORE_ITEM_KEY_BYTES} bytes`));
      }
      expect((await a.store.searchItems(['long'], { limit: 10 })).items.map((item) => item.key)).toEqual([largest]);
      // Why: a GET naming a 16 KiB key never reaches the routes (Node's parser refuses its request line).
      const tooLong = await fetch(`${app.url}/store/items?namespace=long&key=${'k'.repeat(16 * 1024)}`, { headers: { 'X-Api-Key': KEYS.a } });
      expect({ status: tooLong.status, body: await tooLong.json() }).toMatchObject({ status: 400, body: { error: { message: expect.stringMatching(/larger than the server accepts/) } } });
      await a.store.deleteItem(namespace, largest);
    });

    it("answers 413 past the tenant's byte cap and writes nothing", async () => {
      const c = new Client({ apiUrl: app.url, apiKey: KEYS.c, callerOptions: { maxRetries: 0 } });
      const half = { text: 'x'.repeat(CAP_BYTES / 2) };
      await c.store.putItem(['cap'], 'first', half);
      const { status, body } = await failure(c.store.putItem(['cap'], 'second', half));
      expect(status).toBe(413);
      expect(body.error.code).toBe('payload_too_large');
      expect(body.detail).toBe(body.error.message);
      expect(await c.store.getItem(['cap'], 'second')).toBeNull();
      await c.store.deleteItem(['cap'], 'first');
      await c.store.putItem(['cap'], 'second', half);
      expect(await c.store.getItem(['cap'], 'second')).toMatchObject({ value: half });
    });
  });

  describe('tenants and roles', () => {
    it("keeps tenant B out of tenant A's items: reads see none, writes touch B's own", async () => {
      const ns = ['shared-name', `t-${randomUUID().slice(0, 8)}`];
      await a.store.putItem(ns, 'secret', { owner: 'A' });

      expect(await b.store.getItem(ns, 'secret')).toBeNull();
      expect((await b.store.searchItems(ns)).items).toEqual([]);
      expect((await b.store.searchItems([])).items.filter((i) => i.namespace[1] === ns[1])).toEqual([]);
      expect((await b.store.listNamespaces({ prefix: ['shared-name'] })).namespaces).toEqual([]);
      await b.store.deleteItem(ns, 'secret');
      await b.store.putItem(ns, 'secret', { owner: 'B' });

      expect(await a.store.getItem(ns, 'secret')).toMatchObject({ value: { owner: 'A' } });
      expect(await b.store.getItem(ns, 'secret')).toMatchObject({ value: { owner: 'B' } });
      // Assistants are the registry's: the same for every tenant.
      expect((await b.assistants.search({ limit: 100 })).map((x) => x.graph_id).sort()).toEqual(ALL_IDS);
    });

    it('lets a viewer key read and search but not put or delete (403 with detail)', async () => {
      const ns = ['viewed', `v-${randomUUID().slice(0, 8)}`];
      await a.store.putItem(ns, 'k', { v: 1 });
      expect(await aViewer.store.getItem(ns, 'k')).toMatchObject({ value: { v: 1 } });
      expect((await aViewer.store.searchItems(ns)).items).toHaveLength(1);
      expect((await aViewer.store.listNamespaces({ prefix: ns })).namespaces).toEqual([ns]);
      expect(await aViewer.assistants.count()).toBe(ALL_IDS.length);

      for (const write of [() => aViewer.store.putItem(ns, 'k', { v: 2 }), () => aViewer.store.deleteItem(ns, 'k'), () => aViewer.assistants.create({ graphId: 'echo' })]) {
        const { status, body } = await failure(write);
        expect(status).toBe(403);
        expect(body).toEqual({ error: { code: 'forbidden', message: 'This operation needs the user role.' }, detail: 'This operation needs the user role.' });
      }
      expect(await a.store.getItem(ns, 'k')).toMatchObject({ value: { v: 1 } });
    });

    it('answers a missing or wrong key 401 with detail, and /ok and /info without one', async () => {
      const anonymous = new Client({ apiUrl: app.url, apiKey: null });
      const { status, body } = await failure(anonymous.store.searchItems(['x']));
      expect(status).toBe(401);
      expect(body.detail).toBe(body.error.message);
      expect((await failure(new Client({ apiUrl: app.url, apiKey: 'not-a-key' }).assistants.count())).status).toBe(401);

      expect(await call(`${app.url}/ok`)).toMatchObject({ status: 200, body: { ok: true } });
      expect(await call(`${app.url}/info`)).toMatchObject({
        status: 200,
        body: { version: expect.any(String), context: 'js', flags: { assistants: true, crons: true, langsmith: false } },
      });
    });
  });
});
