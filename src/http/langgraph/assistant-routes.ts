import { z } from 'zod';
import {
  ASSISTANT_FIELDS,
  assistantGraph,
  assistantOf,
  assistantSchemas,
  assistantVersions,
  matchingAssistants,
  refuseAssistantChange,
  resolveAssistant,
  searchAssistants,
} from '../../langgraph-server/assistants.js';
import type { AppDeps } from '../deps.js';
import type { AnyRoute } from '../route.js';
import { JsonObjectSchema, Timestamp } from '../schemas.js';
import { defineLangGraphRoute, langgraphErrors, searchAnswer } from './define.js';

/** The routes of the LangGraph Server API's assistants (src/langgraph-server/assistants.ts): every agent is one. */

export const AssistantSchema = z
  .object({
    assistant_id: z.string().meta({ description: "UUIDv5 of the graph id in LangGraph's namespace (the graph id is accepted in its place)" }),
    graph_id: z.string().meta({ description: 'the agent id' }),
    name: z.string(),
    description: z.string(),
    config: JsonObjectSchema,
    context: JsonObjectSchema,
    metadata: JsonObjectSchema,
    version: z.number().int(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Assistant' });

const Filters = {
  graph_id: z.string().optional().meta({ description: 'only this graph (agent id)' }),
  name: z.string().optional().meta({ description: 'names holding this, case-insensitively' }),
  metadata: JsonObjectSchema.optional().meta({ description: 'metadata holding each of these keys with this value' }),
};

const AssistantParams = z.object({ assistant_id: z.string().meta({ description: 'assistant id, or the graph id' }) });
const Page = {
  limit: z.number().int().min(1).max(1000).default(10).meta({ description: 'page size (1–1000)' }),
  offset: z.number().int().min(0).default(0).meta({ description: 'items to skip' }),
};
const Xray = z
  .string()
  .regex(/^(true|false|\d{1,3})$/, { error: 'expected true, false or a depth' })
  .transform((v) => (v === 'true' ? true : v === 'false' ? false : Number(v)))
  .optional()
  .meta({ description: 'draw subgraphs inside their nodes (a number: to that depth)' });
const JsonSchemaOrNull = JsonObjectSchema.nullable();
const SchemasSchema = z
  .object({
    graph_id: z.string(),
    state_schema: JsonSchemaOrNull,
    input_schema: JsonSchemaOrNull,
    output_schema: JsonSchemaOrNull,
    config_schema: JsonSchemaOrNull,
    context_schema: JsonSchemaOrNull,
  })
  .meta({ id: 'AssistantSchemas' });
const NodeId = z.unknown().meta({ description: 'a node name (a number for a node LangGraph drew without one)' });
const GraphSchema = z
  .object({
    nodes: z.array(z.object({ id: NodeId }).loose()),
    edges: z.array(z.object({ source: NodeId, target: NodeId }).loose()),
  })
  .meta({ id: 'AssistantGraph' });

/** POST /assistants/search and /count, GET an assistant, its graph, schemas and subgraphs; create, update and delete refused. */
export function langgraphAssistantRoutes(deps: Pick<AppDeps, 'agents'>): AnyRoute[] {
  const { agents } = deps;
  const read = langgraphErrors(400, 401, 403, 429);
  const one = langgraphErrors(400, 401, 403, 404, 429);
  return [
    defineLangGraphRoute({
      method: 'POST',
      path: '/assistants/search',
      operationId: 'searchAssistants',
      summary: 'Search assistants (every agent and graph is one)',
      readOnly: true,
      body: z.strictObject({
        ...Filters,
        ...Page,
        sort_by: z.enum(['assistant_id', 'graph_id', 'name', 'created_at', 'updated_at']).default('created_at'),
        sort_order: z.enum(['asc', 'desc']).default('desc'),
        select: z.array(z.enum(ASSISTANT_FIELDS)).min(1).optional().meta({ description: 'only these fields of each assistant' }),
      }),
      bodyExamples: { all: { summary: 'the first ten, newest first', value: { limit: 10, offset: 0, sort_by: 'created_at', sort_order: 'desc' } } },
      responses: {
        200: {
          description: 'A page of assistants, ties by graph id',
          schema: z.array(AssistantSchema.partial()),
          headers: { 'X-Pagination-Total': 'assistants matching', 'X-Pagination-Next': 'offset of the next page, when there is one' },
        },
        ...langgraphErrors(400, 401, 403, 413, 415, 429),
      },
      handler: async ({ body }) => searchAnswer(searchAssistants(agents, body), body),
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/assistants/count',
      operationId: 'countAssistants',
      summary: 'Count assistants matching the filters',
      readOnly: true,
      body: z.strictObject(Filters),
      bodyExamples: { all: { summary: 'every assistant', value: {} } },
      responses: { 200: { description: 'How many match', schema: z.number().int() }, ...langgraphErrors(400, 401, 403, 413, 415, 429) },
      handler: async ({ body }) => ({ status: 200, body: matchingAssistants(agents, body).length }),
    }),
    defineLangGraphRoute({
      method: 'GET',
      path: '/assistants/:assistant_id',
      operationId: 'getAssistant',
      summary: 'One assistant',
      params: AssistantParams,
      responses: { 200: { description: 'The assistant', schema: AssistantSchema }, ...one },
      handler: async ({ params }) => ({ status: 200, body: assistantOf(resolveAssistant(agents, params.assistant_id)) }),
    }),
    defineLangGraphRoute({
      method: 'GET',
      path: '/assistants/:assistant_id/graph',
      operationId: 'getAssistantGraph',
      summary: "The assistant's graph: nodes and edges",
      params: AssistantParams,
      query: z.object({ xray: Xray }),
      responses: { 200: { description: 'Nodes and edges, as LangGraph draws a graph', schema: GraphSchema }, ...one },
      handler: async ({ params, query }) => ({ status: 200, body: await assistantGraph(agents, params.assistant_id, query.xray) }),
    }),
    defineLangGraphRoute({
      method: 'GET',
      path: '/assistants/:assistant_id/schemas',
      operationId: 'getAssistantSchemas',
      summary: "The JSON schemas of the assistant's state, input, output, config and context",
      params: AssistantParams,
      responses: { 200: { description: 'Schemas; {} (any object) for an agent whose state is open, null where none is declared', schema: SchemasSchema }, ...one },
      handler: async ({ params }) => ({ status: 200, body: await assistantSchemas(agents, params.assistant_id) }),
    }),
    ...['/assistants/:assistant_id/subgraphs', '/assistants/:assistant_id/subgraphs/:namespace'].map((path) =>
      defineLangGraphRoute({
        method: 'GET',
        path,
        operationId: path.endsWith(':namespace') ? 'getAssistantSubgraphsOf' : 'getAssistantSubgraphs',
        summary: "The assistant's subgraphs (of a namespace): none are described ({})",
        params: path.endsWith(':namespace') ? AssistantParams.extend({ namespace: z.string() }) : AssistantParams,
        query: z.object({ recurse: z.enum(['true', 'false']).optional() }),
        responses: { 200: { description: 'Always {}', schema: z.object({}) }, ...one },
        handler: async ({ params }) => {
          resolveAssistant(agents, params.assistant_id);
          return { status: 200, body: {} };
        },
      }),
    ),
    defineLangGraphRoute({
      method: 'POST',
      path: '/assistants/:assistant_id/versions',
      operationId: 'listAssistantVersions',
      summary: "The assistant's versions: its one version",
      readOnly: true,
      params: AssistantParams,
      body: z.strictObject({ metadata: Filters.metadata, ...Page }),
      bodyExamples: { all: { summary: 'the first ten versions', value: { limit: 10, offset: 0 } } },
      responses: { 200: { description: 'Versions, newest first', schema: z.array(AssistantSchema.omit({ updated_at: true })) }, ...langgraphErrors(400, 401, 403, 404, 413, 415, 429) },
      handler: async ({ params, body }) => ({ status: 200, body: assistantVersions(agents, params.assistant_id, body) }),
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/assistants',
      operationId: 'createAssistant',
      summary: 'Refused: assistants are the configured agents and graphs',
      body: z.object({ graph_id: z.string() }).loose(),
      bodyExamples: { echo: { summary: 'another assistant of echo (refused)', value: { graph_id: 'echo' } } },
      responses: { ...read, ...langgraphErrors(409, 413, 415) },
      handler: async () => refuseAssistantChange(agents, 'created'),
    }),
    defineLangGraphRoute({
      method: 'PATCH',
      path: '/assistants/:assistant_id',
      operationId: 'updateAssistant',
      summary: 'Refused: assistants are the configured agents and graphs',
      params: AssistantParams,
      body: JsonObjectSchema,
      bodyExamples: { rename: { summary: 'a new name (refused)', value: { name: 'renamed' } } },
      responses: { ...one, ...langgraphErrors(409, 413, 415) },
      handler: async ({ params }) => refuseAssistantChange(agents, 'changed', params.assistant_id),
    }),
    defineLangGraphRoute({
      method: 'DELETE',
      path: '/assistants/:assistant_id',
      operationId: 'deleteAssistant',
      summary: 'Refused: assistants are the configured agents and graphs',
      params: AssistantParams,
      query: z.object({ delete_threads: z.enum(['true', 'false']).optional() }),
      responses: { ...one, ...langgraphErrors(409) },
      handler: async ({ params }) => refuseAssistantChange(agents, 'deleted', params.assistant_id),
    }),
  ];
}
