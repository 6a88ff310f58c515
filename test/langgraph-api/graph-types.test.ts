import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Client } from '@langchain/langgraph-sdk';
import { Client as Client2 } from '@langchain/langgraph-sdk-2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { extractTypedSchemas } from '../../src/langgraph/type-schemas-extract.js';
import { TYPE_SCHEMAS_CHANNEL, TYPE_SCHEMAS_MEMORY_MB, typedSchemasOf, type TypeSchemasReport } from '../../src/langgraph/type-schemas.js';
import { loadAgentsAndGraphs } from '../../src/main/process.js';
import { createLogger } from '../../src/main/logger.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startRedis, type TestRedis } from '../support/redis.js';

/*
 * Schemas of graphs whose state is an Annotation (types in TypeScript only), read from their
 * types as LangGraph's server reads them (test/fixtures/langgraph-types/): field types, literal
 * unions as enums, BaseMessage as a definition, the context as config and context schema,
 * subgraphs by namespace with their own types; a Zod state keeps LangGraph's registry
 * metadata (langgraph_type) though the graph file resolves its own copy of @langchain/langgraph.
 */

/** The compiler, as the schema reader loads it. */
const ts = createRequire(import.meta.url)('typescript') as typeof import('typescript');
const FIXTURES = fileURLToPath(new URL('../fixtures/langgraph-types/', import.meta.url));
const TYPED = `${FIXTURES}typed.ts`;
/** A 12-key mapped type nine levels deep: small to write, too large to describe. */
const DEEP = `${FIXTURES}deep.ts`;
const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';
const MESSAGE = 'BaseMessage<MessageStructure<MessageToolSet>,MessageType>';

const expectedState = {
  type: 'object',
  properties: {
    messages: { type: 'array', items: { $ref: `#/definitions/${MESSAGE}` } },
    notes: { type: 'array', items: { type: 'string' } },
    score: { type: ['null', 'number'] },
    review: { type: 'object', properties: { approved: { type: 'boolean' }, by: { type: 'string' } }, required: ['approved'] },
  },
  required: ['messages', 'notes', 'score', 'review'],
  definitions: { [MESSAGE]: { type: 'object' } },
  $schema: DRAFT_07,
};
const expectedContext = { type: 'object', properties: { tone: { type: 'string', enum: ['dry', 'warm'] }, limit: { type: 'number' } }, $schema: DRAFT_07 };

/** What the readers report on their diagnostics channel while `body` runs. */
async function reportsDuring<T>(body: () => Promise<T>): Promise<{ value: T; reports: TypeSchemasReport[] }> {
  const reports: TypeSchemasReport[] = [];
  const listener = (message: unknown) => reports.push(message as TypeSchemasReport);
  subscribe(TYPE_SCHEMAS_CHANNEL, listener);
  try {
    return { value: await body(), reports };
  } finally {
    unsubscribe(TYPE_SCHEMAS_CHANNEL, listener);
  }
}

describe('the types of a graph file, read by the TypeScript compiler', () => {
  it('gives the state, input, output and context of a compiled graph, and its subgraphs by node name', () => {
    const read = extractTypedSchemas(ts, TYPED, 'graph');
    expect(read.root?.state).toEqual(expectedState);
    expect(read.root?.output).toEqual(expectedState);
    // What a run may be given: every field optional; a field with a reducer also takes LangGraph's Overwrite.
    expect(read.root?.input).toMatchObject({
      type: 'object',
      properties: {
        notes: { anyOf: expect.arrayContaining([{ type: 'array', items: { type: 'string' } }, expect.objectContaining({ properties: { __overwrite__: { type: 'array', items: { type: 'string' } } } })]) },
        score: { type: ['null', 'number'] },
      },
    });
    expect(read.root?.input).not.toHaveProperty('required');
    expect(read.root?.config).toMatchObject(expectedContext);
    expect(Object.keys(read.subgraphs).sort()).toEqual(['desk', 'editor']);
    expect(read.subgraphs.desk?.state).toMatchObject({ properties: { lane: { type: 'string', enum: ['fast', 'slow'] }, notes: { type: 'array' } } });
    expect(read.subgraphs.editor?.state).toMatchObject({ properties: { stage: { type: 'string', enum: ['draft', 'final'] } } });
    // A subgraph that declares no context: null, not an empty object.
    expect(read.subgraphs.editor?.config).toBeNull();
  });

  it("reads a function export's answer as the graph, and gives nothing for an export that is not a graph", () => {
    expect(extractTypedSchemas(ts, TYPED, 'makeGraph').root?.state).toEqual(expectedState);
    expect(extractTypedSchemas(ts, TYPED, 'nothing').root).toBeNull();
  });

  it('reads in a child process, once per graph: a file that cannot be read gives undefined, and so it stays', async () => {
    const first = typedSchemasOf(TYPED, 'graph');
    expect(typedSchemasOf(TYPED, 'graph')).toBe(first);
    expect((await first)?.root?.state).toEqual(expectedState);
    const missing = `${FIXTURES}not-there.ts`;
    const { value: none, reports } = await reportsDuring(() => typedSchemasOf(missing, 'graph'));
    expect(none).toBeUndefined();
    expect(reports.map((r) => [r.phase, r.outcome])).toEqual([
      ['start', undefined],
      ['end', 'failed'],
    ]);
    // The failure is remembered: no second reader.
    const again = await reportsDuring(() => typedSchemasOf(missing, 'graph'));
    expect(again.value).toBeUndefined();
    expect(again.reports).toEqual([]);
  });

  it('a type too large to describe: the reader stops at its size bound, in bounded memory, and the failure is remembered', async () => {
    const { value, reports } = await reportsDuring(() => typedSchemasOf(DEEP, 'graph'));
    expect(value).toBeUndefined();
    expect(reports.filter((r) => r.phase === 'start')).toHaveLength(1);
    const end = reports.find((r) => r.phase === 'end')!;
    expect(end).toMatchObject({ file: DEEP, exportName: 'graph', outcome: 'too_large' });
    // Its own peak, as the child measured it: within the heap it is given.
    expect(end.maxRssKiB).toBeGreaterThan(0);
    expect(end.maxRssKiB!).toBeLessThan(TYPE_SCHEMAS_MEMORY_MB * 1024);
    const again = await reportsDuring(() => typedSchemasOf(DEEP, 'graph'));
    expect(again.value).toBeUndefined();
    expect(again.reports).toEqual([]);
  }, 60_000);

  it('a reader past its heap limit is stopped by it (the process dies, the API does not), and answers undefined', async () => {
    const { value, reports } = await reportsDuring(() => typedSchemasOf(TYPED, 'makeGraph', { memoryMb: 16 }));
    expect(value).toBeUndefined();
    expect(reports.find((r) => r.phase === 'end')).toMatchObject({ outcome: 'crashed' });
  }, 60_000);
});

describe.each(['memory', 'redis'] as const)('schemas and subgraphs through the SDK (%s)', (backend) => {
  let redis: TestRedis | undefined;
  let api: TestApi;
  let client: Client;
  let client2: Client2;
  beforeAll(async () => {
    if (backend === 'redis') redis = await startRedis();
    const registry = await loadAgentsAndGraphs(loadConfig({ SERVICE_LANGGRAPH_JSON: `${FIXTURES}langgraph.json` }), undefined, createLogger('silent'));
    api = await startTestApi({ agents: registry, ...(redis ? { redisUrl: redis.url } : {}) });
    api.composition.startExecuting();
    client = new Client({ apiUrl: api.url, apiKey: null });
    client2 = new Client2({ apiUrl: api.url, apiKey: null });
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await redis?.stop();
  });

  it("an Annotation graph's schemas are its types; config and context are its context's (SDK 1.x and 2.0)", async () => {
    const assistant = await client.assistants.create({ graphId: 'typed' });
    const schemas = await client.assistants.getSchemas(assistant.assistant_id);
    expect(schemas).toMatchObject({ graph_id: 'typed', state_schema: expectedState, output_schema: expectedState, config_schema: expectedContext, context_schema: expectedContext });
    expect(await client2.assistants.getSchemas('typed')).toEqual(schemas);
    // The graph still runs as before.
    expect(await client.runs.wait(null, assistant.assistant_id, { input: { notes: [] }, context: { tone: 'dry', limit: 1 } })).toMatchObject({
      notes: expect.arrayContaining(['planned', 'written']),
    });
  }, 60_000);

  it('subgraphs: by namespace, a level or every level, each with its own types', async () => {
    expect(Object.keys(await client.assistants.getSubgraphs('typed'))).toEqual(['desk']);
    const all = await client2.assistants.getSubgraphs('typed', { recurse: true });
    expect(Object.keys(all)).toEqual(['desk', 'desk|editor']);
    expect(all).toMatchObject({
      desk: { state: { type: 'object', properties: { lane: { type: 'string', enum: ['fast', 'slow'] } } } },
      'desk|editor': { state: { type: 'object', properties: { stage: { type: 'string', enum: ['draft', 'final'] } } } },
    });
    expect(Object.keys(await client.assistants.getSubgraphs('typed', { namespace: 'desk' }))).toEqual(['desk']);
    expect(await client.assistants.getSubgraphs('registry')).toEqual({});
  }, 60_000);

  it('a graph whose types are too large is described by its channels, and its next request starts no reader', async () => {
    const fallback = { type: 'object', properties: { tree: {}, note: {} } };
    const first = await reportsDuring(() => client.assistants.getSchemas('deep'));
    expect(first.value).toMatchObject({ graph_id: 'deep', state_schema: fallback });
    expect(first.reports.filter((r) => r.phase === 'start').length).toBeLessThanOrEqual(1);
    const second = await reportsDuring(() => client.assistants.getSchemas('deep'));
    expect(second.value).toEqual(first.value);
    expect(second.reports).toEqual([]);
  }, 60_000);

  it("a Zod state keeps LangGraph's registry metadata of the graph's own @langchain/langgraph", async () => {
    const schemas = await client.assistants.getSchemas('registry');
    expect(schemas.state_schema).toMatchObject({ type: 'object', properties: { messages: { langgraph_type: 'messages' }, count: { type: 'number' } } });
  });
});
