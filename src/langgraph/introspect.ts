import { toJsonSchema } from '@langchain/core/utils/json_schema';
import { isZodSchemaV3, isZodSchemaV4 } from '@langchain/core/utils/types';

/*
 * What the LangGraph Server API tells about a compiled graph (GET /assistants/{id}/graph and
 * /schemas), as the LangGraph server derives it. Reached by a dynamic import from src/http/,
 * only for graph agents. Graphs are read by their shape: a graph file may resolve another copy
 * of @langchain/langgraph than agentplane's.
 */

/** A node or an edge of a drawn graph, as LangChain's `Graph.toJSON()` writes them. */
export interface GraphDrawing {
  nodes: { id: string | number; type?: string; data?: unknown; metadata?: unknown }[];
  edges: { source: string | number; target: string | number; data?: string; conditional?: boolean }[];
}

type JsonSchema = Record<string, unknown>;

/** The JSON schemas of a graph's state, input, output and config; null where it declares none. */
export interface GraphSchemas {
  state: JsonSchema | null;
  input: JsonSchema | null;
  output: JsonSchema | null;
  config: JsonSchema | null;
}

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

/**
 * The JSON schemas a graph declares, tried in the LangGraph server's order: a `StateSchema`;
 * Zod schemas (with LangGraph's registry, then plainly); else, for an `Annotation` state, an
 * object schema naming its channels (their types are TypeScript's only). Null where none.
 */
export async function graphSchemas(graph: unknown): Promise<GraphSchemas> {
  const builder = (graph as { builder?: Builder } | null)?.builder;
  if (!builder) return NONE;
  return fromStateSchema(builder) ?? (await fromZodRegistry(graph)) ?? fromZod(builder) ?? fromChannels(builder);
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

async function fromZodRegistry(graph: unknown): Promise<GraphSchemas | undefined> {
  try {
    const zod = await import('@langchain/langgraph/zod/schema');
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
