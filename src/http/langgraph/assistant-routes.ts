import { z } from 'zod';
import { countAssistants, searchAssistants } from '../../langgraph-server/assistant-search.js';
import { deleteAssistant } from '../../langgraph-server/assistant-threads.js';
import {
  ASSISTANT_FIELDS,
  assistantGraph,
  assistantSchemas,
  assistantSubgraphs,
  assistantVersions,
  createAssistant,
  getAssistant,
  setLatestVersion,
  updateAssistant,
} from '../../langgraph-server/assistants.js';
import type { AppDeps } from '../deps.js';
import type { AnyRoute } from '../route.js';
import { JsonObjectSchema, Timestamp } from '../schemas.js';
import { defineLangGraphRoute, langgraphErrors } from './define.js';

/**
 * The routes of the LangGraph Server API's assistants (src/langgraph-server/assistants.ts):
 * every graph's default assistant, and the assistants a tenant stores, with their versions.
 */

export const AssistantSchema = z
  .object({
    assistant_id: z.string().meta({ description: "a stored assistant's UUID, or a graph's default: the UUIDv5 of the graph id in LangGraph's namespace (the graph id is accepted in its place)" }),
    graph_id: z.string().meta({ description: 'the graph (agent id)' }),
    name: z.string(),
    description: z.string().nullable(),
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
  metadata: JsonObjectSchema.optional().meta({ description: 'metadata containing this (JSON containment, as jsonb @>)' }),
};

const AssistantParams = z.object({ assistant_id: z.string().meta({ description: "assistant id, or the graph id (its default assistant)" }) });
const AssistantConfigSchema = z
  .looseObject({
    tags: z.array(z.string()).optional(),
    recursion_limit: z.number().int().min(1).max(100_000).optional(),
    configurable: JsonObjectSchema.optional(),
    metadata: JsonObjectSchema.optional(),
  })
  .meta({ description: "the run config the assistant's runs start from: `configurable`, `tags`, `recursion_limit`, `metadata` (other keys are kept and ignored)" });
const Editable = {
  config: AssistantConfigSchema.optional(),
  context: JsonObjectSchema.optional().meta({ description: "the graph's runtime context its runs start from" }),
  metadata: JsonObjectSchema.optional(),
  name: z.string().optional(),
  description: z.string().nullable().optional(),
};
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
const SubgraphSchemasSchema = z
  .object({ state: JsonSchemaOrNull, input: JsonSchemaOrNull, output: JsonSchemaOrNull, config: JsonSchemaOrNull })
  .meta({ id: 'SubgraphSchemas' });
const NodeId = z.unknown().meta({ description: 'a node name (a number for a node LangGraph drew without one)' });
const GraphSchema = z
  .object({
    nodes: z.array(z.object({ id: NodeId }).loose()),
    edges: z.array(z.object({ source: NodeId, target: NodeId }).loose()),
  })
  .meta({ id: 'AssistantGraph' });

/** POST /assistants (create), /search, /count, /{id}/versions and /{id}/latest; GET, PATCH and DELETE an assistant; its graph, schemas and subgraphs. */
export function langgraphAssistantRoutes(deps: Pick<AppDeps, 'agents' | 'assistants' | 'store' | 'graphs' | 'config' | 'runs' | 'logger'>): AnyRoute[] {
  const one = langgraphErrors(400, 401, 403, 404, 429);
  const write = langgraphErrors(400, 401, 403, 404, 409, 413, 415, 429);
  return [
    defineLangGraphRoute({
      method: 'POST',
      path: '/assistants/search',
      operationId: 'searchAssistants',
      summary: "Search the tenant's assistants: every graph's default and the stored ones",
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
          description: 'A page of assistants, ties by graph id then assistant id: at most `limit`, and no more than SERVICE_MAX_PAGE_BYTES of JSON (one assistant always fits)',
          schema: z.array(AssistantSchema.partial()),
          headers: { 'X-Pagination-Total': 'assistants matching', 'X-Pagination-Next': 'offset of the next page, when there is one (the page reached its limit or its bytes)' },
        },
        ...langgraphErrors(400, 401, 403, 413, 415, 429),
      },
      handler: async ({ body, principal }) => {
        const { texts, total, next } = await searchAssistants(deps, principal.tenant, body);
        return {
          status: 200,
          // The assistants' JSON as the search measured it, not serialized a second time.
          body: `[${texts.join(',')}]`,
          headers: { 'Content-Type': 'application/json; charset=utf-8', 'X-Pagination-Total': String(total), ...(next === undefined ? {} : { 'X-Pagination-Next': String(next) }) },
        };
      },
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/assistants/count',
      operationId: 'countAssistants',
      summary: 'Count assistants matching the filters (by graph alone from an index; with a name or metadata, reading them a few at a time)',
      readOnly: true,
      body: z.strictObject(Filters),
      bodyExamples: { all: { summary: 'every assistant', value: {} } },
      responses: { 200: { description: 'How many match', schema: z.number().int() }, ...langgraphErrors(400, 401, 403, 413, 415, 429) },
      handler: async ({ body, principal }) => ({ status: 200, body: await countAssistants(deps, principal.tenant, body) }),
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/assistants',
      operationId: 'createAssistant',
      summary: "Store an assistant of a graph: its config, context, metadata, name and description (version 1)",
      body: z.strictObject({
        graph_id: z.string().min(1).meta({ description: 'a graph of SERVICE_LANGGRAPH_JSON (a defineAgent agent is 400)' }),
        assistant_id: z.uuid().optional().meta({ description: 'its id; a UUID is made when omitted' }),
        if_exists: z.enum(['raise', 'do_nothing']).optional().meta({ description: 'when the id is taken: 409 (`raise`, the default) or answer the existing assistant' }),
        ...Editable,
      }),
      bodyExamples: {
        tuned: {
          summary: 'an assistant of a graph with its own configurable values',
          value: { graph_id: 'my-graph', name: 'terse', config: { configurable: { style: 'terse' } }, metadata: { team: 'docs' } },
        },
      },
      responses: {
        200: { description: 'The assistant (the existing one with `if_exists: do_nothing`)', schema: AssistantSchema },
        ...write,
      },
      handler: async ({ body, principal }) => ({ status: 200, body: await createAssistant(deps, principal.tenant, body) }),
    }),
    defineLangGraphRoute({
      method: 'GET',
      path: '/assistants/:assistant_id',
      operationId: 'getAssistant',
      summary: 'One assistant',
      params: AssistantParams,
      responses: { 200: { description: 'The assistant (its latest version)', schema: AssistantSchema }, ...one },
      handler: async ({ params, principal }) => ({ status: 200, body: (await getAssistant(deps, principal.tenant, params.assistant_id)).assistant }),
    }),
    defineLangGraphRoute({
      method: 'PATCH',
      path: '/assistants/:assistant_id',
      operationId: 'updateAssistant',
      summary: 'Change a stored assistant: a new version, its latest (metadata merged, the rest replaced where given)',
      params: AssistantParams,
      body: z.strictObject({ graph_id: z.string().min(1).optional(), ...Editable }),
      bodyExamples: { rename: { summary: 'a new name', value: { name: 'renamed' } } },
      responses: { 200: { description: 'The assistant as changed', schema: AssistantSchema }, ...write },
      handler: async ({ params, body, principal }) => ({ status: 200, body: await updateAssistant(deps, principal.tenant, params.assistant_id, body) }),
    }),
    defineLangGraphRoute({
      method: 'DELETE',
      path: '/assistants/:assistant_id',
      operationId: 'deleteAssistant',
      summary: 'Delete a stored assistant and its versions (with `delete_threads=true`, its threads too)',
      params: AssistantParams,
      query: z.object({ delete_threads: z.enum(['true', 'false']).optional().meta({ description: "also delete the threads whose metadata names the assistant (among the tenant's 1000 newest)" }) }),
      responses: { 204: { description: 'Deleted' }, ...one, ...langgraphErrors(409) },
      handler: async ({ params, query, principal }) => {
        await deleteAssistant(deps, principal.tenant, params.assistant_id, { deleteThreads: query.delete_threads === 'true', by: principal.subject });
        return { status: 204, body: undefined };
      },
    }),
    defineLangGraphRoute({
      method: 'GET',
      path: '/assistants/:assistant_id/graph',
      operationId: 'getAssistantGraph',
      summary: "The assistant's graph: nodes and edges",
      params: AssistantParams,
      query: z.object({ xray: Xray }),
      responses: { 200: { description: 'Nodes and edges, as LangGraph draws a graph', schema: GraphSchema }, ...one },
      handler: async ({ params, query, principal }) => ({ status: 200, body: await assistantGraph(deps, principal.tenant, params.assistant_id, query.xray) }),
    }),
    defineLangGraphRoute({
      method: 'GET',
      path: '/assistants/:assistant_id/schemas',
      operationId: 'getAssistantSchemas',
      summary: "The JSON schemas of the assistant's state, input, output, config and context",
      params: AssistantParams,
      responses: { 200: { description: 'Schemas; {} (any object) for an agent whose state is open, null where none is declared', schema: SchemasSchema }, ...one },
      handler: async ({ params, principal }) => ({ status: 200, body: await assistantSchemas(deps, principal.tenant, params.assistant_id) }),
    }),
    ...['/assistants/:assistant_id/subgraphs', '/assistants/:assistant_id/subgraphs/:namespace'].map((path) =>
      defineLangGraphRoute({
        method: 'GET',
        path,
        operationId: path.endsWith(':namespace') ? 'getAssistantSubgraphsOf' : 'getAssistantSubgraphs',
        summary: "The assistant's subgraphs (of a namespace), each with its schemas, by namespace (`node`, `node|inner`)",
        params: path.endsWith(':namespace') ? AssistantParams.extend({ namespace: z.string() }) : AssistantParams,
        query: z.object({ recurse: z.enum(['true', 'false']).optional().meta({ description: 'subgraphs of subgraphs too' }) }),
        responses: { 200: { description: 'Schemas by namespace ({} for an agent of agents.ts)', schema: z.record(z.string(), SubgraphSchemasSchema) }, ...one },
        handler: async ({ params, query, principal }) => {
          const namespace = 'namespace' in params ? (params.namespace as string) : undefined;
          return { status: 200, body: await assistantSubgraphs(deps, principal.tenant, params.assistant_id, namespace, query.recurse === 'true') };
        },
      }),
    ),
    defineLangGraphRoute({
      method: 'POST',
      path: '/assistants/:assistant_id/versions',
      operationId: 'listAssistantVersions',
      summary: "The assistant's versions, newest first (a graph's default assistant: its one version)",
      readOnly: true,
      params: AssistantParams,
      body: z.strictObject({ metadata: Filters.metadata, ...Page }),
      bodyExamples: { all: { summary: 'the first ten versions', value: { limit: 10, offset: 0 } } },
      responses: { 200: { description: 'Versions, newest first', schema: z.array(AssistantSchema.omit({ updated_at: true })) }, ...langgraphErrors(400, 401, 403, 404, 413, 415, 429) },
      handler: async ({ params, body, principal }) => ({ status: 200, body: await assistantVersions(deps, principal.tenant, params.assistant_id, body) }),
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/assistants/:assistant_id/latest',
      operationId: 'setAssistantLatestVersion',
      summary: 'Make one of a stored assistant\'s versions its latest (every field of that version)',
      params: AssistantParams,
      body: z.strictObject({ version: z.number().int().min(1) }),
      bodyExamples: { first: { summary: 'back to version 1', value: { version: 1 } } },
      responses: { 200: { description: 'The assistant, at that version', schema: AssistantSchema }, ...write },
      handler: async ({ params, body, principal }) => ({ status: 200, body: await setLatestVersion(deps, principal.tenant, params.assistant_id, body.version) }),
    }),
  ];
}
