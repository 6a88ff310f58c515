import { toJsonSchema } from '@langchain/core/utils/json_schema';
import { isZodSchemaV3, isZodSchemaV4 } from '@langchain/core/utils/types';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { GraphDrawing, GraphSchemas } from '../ports/graph-threads.js';
import { typedSchemasOf, type TypedGraphSchemas } from './type-schemas.js';
import { installedFrom } from './versions.js';

/*
 * What the LangGraph Server API tells about a compiled graph (GET /assistants/{id}/graph and
 * /schemas), as the LangGraph server derives it. Reached by a dynamic import from
 * descriptions.ts, at the first such question. Graphs are read by their shape: a graph file may
 * resolve another copy of @langchain/langgraph than agentplane's.
 */

type JsonSchema = Record<string, unknown>;

interface Drawable {
  getGraphAsync?: (config?: Record<string, unknown>) => Promise<{ toJSON(): GraphDrawing }>;
  getGraph?: (config?: Record<string, unknown>) => { toJSON(): GraphDrawing };
}

/** A `StateGraph`'s definitions, kept on the compiled graph as `builder`. */
interface Builder {
  _schemaDefinition?: unknown;
  _inputDefinition?: unknown;
  _outputDefinition?: unknown;
  _configSchema?: unknown;
  _schemaRuntimeDefinition?: unknown;
  _inputRuntimeDefinition?: unknown;
  _outputRuntimeDefinition?: unknown;
  _configRuntimeSchema?: unknown;
}

interface StateSchemaLike {
  getJsonSchema(): JsonSchema;
  getInputJsonSchema(): JsonSchema;
}

const NONE: GraphSchemas = { state: null, input: null, output: null, config: null };

/** The nodes and edges of a compiled graph (`xray`: subgraphs drawn inside, to that depth when a number). */
export async function drawGraph(graph: unknown, xray?: boolean | number): Promise<GraphDrawing> {
  const drawable = graph as Drawable;
  const config = xray === undefined ? {} : { xray };
  if (typeof drawable.getGraphAsync === 'function') return (await drawable.getGraphAsync(config)).toJSON();
  if (typeof drawable.getGraph === 'function') return drawable.getGraph(config).toJSON();
  throw new Error('The graph cannot be drawn: it has neither getGraphAsync nor getGraph.');
}

/** Where a graph comes from: its file (absolute) and export, when known. */
export interface GraphOrigin {
  file?: string | undefined;
  exportName?: string | undefined;
}

/**
 * The JSON schemas a graph declares, tried in the LangGraph server's order: a `StateSchema`;
 * Zod schemas (with LangGraph's registry, then plainly); else, for an `Annotation` state, its
 * TypeScript types (type-schemas.ts), or where they cannot be read an object schema naming its
 * channels. Null where none.
 */
export async function graphSchemas(graph: unknown, origin: GraphOrigin = {}): Promise<GraphSchemas> {
  const builder = (graph as { builder?: Builder } | null)?.builder;
  if (!builder) return NONE;
  const runtime = await runtimeSchemas(graph, builder, origin);
  if (runtime) return runtime;
  const typed = await typedOf(origin);
  return typed?.root ?? fromChannels(builder);
}

/**
 * The subgraphs of a graph (under `namespace`; all depths with `recurse`), by namespace
 * (`node` or `node|inner`), each with its schemas: declared at run time, else its TypeScript
 * types found by the name of the node that runs it, else its channel names.
 */
export async function subgraphSchemas(graph: unknown, origin: GraphOrigin, namespace: string | undefined, recurse: boolean): Promise<Record<string, GraphSchemas>> {
  const walker = graph as { getSubgraphsAsync?: SubgraphWalk; getSubgraphs?: SubgraphWalk };
  const walk = walker.getSubgraphsAsync ?? walker.getSubgraphs;
  if (typeof walk !== 'function') return {};
  const found: Record<string, GraphSchemas> = {};
  let typed: Promise<TypedGraphSchemas | undefined> | undefined;
  for await (const [ns, subgraph] of walk.call(graph, namespace, recurse)) {
    const builder = (subgraph as { builder?: Builder } | null)?.builder;
    const runtime = builder && (await runtimeSchemas(subgraph, builder, origin));
    if (runtime) {
      found[ns] = runtime;
      continue;
    }
    typed ??= typedOf(origin);
    const node = ns.split('|').at(-1)!;
    found[ns] = (await typed)?.subgraphs[node] ?? (builder ? fromChannels(builder) : NONE);
  }
  return found;
}

type SubgraphWalk = (namespace?: string, recurse?: boolean) => AsyncIterable<[string, unknown]> | Iterable<[string, unknown]>;

const typedOf = (origin: GraphOrigin): Promise<TypedGraphSchemas | undefined> =>
  origin.file && origin.exportName ? typedSchemasOf(origin.file, origin.exportName) : Promise.resolve(undefined);

async function runtimeSchemas(graph: unknown, builder: Builder, origin: GraphOrigin): Promise<GraphSchemas | undefined> {
  return fromStateSchema(builder) ?? (await fromZodRegistry(graph, origin)) ?? fromZod(builder);
}

const isStateSchemaLike = (value: unknown): value is StateSchemaLike =>
  typeof (value as Partial<StateSchemaLike> | null)?.getJsonSchema === 'function' && typeof (value as Partial<StateSchemaLike>).getInputJsonSchema === 'function';

const anyFound = (schemas: GraphSchemas): GraphSchemas | undefined => (Object.values(schemas).some((s) => s !== null) ? schemas : undefined);

function fromStateSchema(builder: Builder): GraphSchemas | undefined {
  const state = builder._schemaRuntimeDefinition;
  const input = builder._inputRuntimeDefinition;
  const output = builder._outputRuntimeDefinition;
  if (!isStateSchemaLike(state) && !isStateSchemaLike(input) && !isStateSchemaLike(output)) return undefined;
  return anyFound({
    state: isStateSchemaLike(state) ? state.getJsonSchema() : null,
    // An input that is not a schema of its own is the state's, every field optional.
    input: isStateSchemaLike(input) ? input.getInputJsonSchema() : isStateSchemaLike(state) ? state.getInputJsonSchema() : null,
    output: isStateSchemaLike(output) ? output.getJsonSchema() : null,
    config: null,
  });
}

/**
 * `@langchain/langgraph/zod/schema` of the copy the graph's file imports (its registry of
 * `withLangGraph` metadata is that copy's), else agentplane's.
 */
async function zodSchemaModule(origin: GraphOrigin): Promise<typeof import('@langchain/langgraph/zod/schema')> {
  if (origin.file) {
    try {
      const installed = installedFrom(dirname(origin.file), '@langchain/langgraph', 'graphs');
      const exports = installed && (JSON.parse(readFileSync(join(installed.dir, 'package.json'), 'utf8')) as { exports?: Record<string, unknown> }).exports?.['./zod/schema'];
      const target = esmTarget(exports);
      if (installed && target) return (await import(pathToFileURL(join(installed.dir, target)).href)) as typeof import('@langchain/langgraph/zod/schema');
    } catch {
      // not resolvable from there: agentplane's copy
    }
  }
  return import('@langchain/langgraph/zod/schema');
}

/** The ESM file of a package.json `exports` entry. */
function esmTarget(entry: unknown): string | undefined {
  if (typeof entry === 'string') return entry;
  if (typeof entry !== 'object' || entry === null) return undefined;
  const conditions = entry as Record<string, unknown>;
  return esmTarget(conditions.import) ?? esmTarget(conditions.default);
}

async function fromZodRegistry(graph: unknown, origin: GraphOrigin): Promise<GraphSchemas | undefined> {
  try {
    const zod = await zodSchemaModule(origin);
    const compiled = graph as Parameters<typeof zod.getUpdateTypeSchema>[0];
    // As the LangGraph server: the state is described by what an update may hold.
    return anyFound({
      state: (zod.getUpdateTypeSchema(compiled) as JsonSchema | undefined) ?? null,
      input: (zod.getInputTypeSchema(compiled) as JsonSchema | undefined) ?? null,
      output: (zod.getOutputTypeSchema(compiled) as JsonSchema | undefined) ?? null,
      config: (zod.getConfigTypeSchema(compiled) as JsonSchema | undefined) ?? null,
    });
  } catch {
    // Best effort, as the LangGraph server: a graph its registry cannot read is read plainly.
    return undefined;
  }
}

function fromZod(builder: Builder): GraphSchemas | undefined {
  const convert = (schema: unknown): JsonSchema | null => {
    if (!isZodSchemaV4(schema) && !isZodSchemaV3(schema)) return null;
    try {
      return toJsonSchema(schema) as JsonSchema;
    } catch {
      return null;
    }
  };
  const state = convert(builder._schemaRuntimeDefinition);
  return anyFound({
    state,
    input: convert(builder._inputRuntimeDefinition) ?? (state ? { ...state, required: undefined } : null),
    output: convert(builder._outputRuntimeDefinition),
    config: convert(builder._configRuntimeSchema),
  });
}

function fromChannels(builder: Builder): GraphSchemas {
  const channels = (definition: unknown): JsonSchema | null =>
    typeof definition === 'object' && definition !== null && !Array.isArray(definition)
      ? { type: 'object', properties: Object.fromEntries(Object.keys(definition).map((name) => [name, {}])) }
      : null;
  return {
    state: channels(builder._schemaDefinition),
    input: channels(builder._inputDefinition),
    output: channels(builder._outputDefinition),
    config: channels(builder._configSchema),
  };
}
