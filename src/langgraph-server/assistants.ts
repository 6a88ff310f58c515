import { isDeepStrictEqual } from 'node:util';
import { conflict, notFound } from '../domain/errors.js';
import type { JsonObject } from '../domain/types.js';
import { uuid5 } from '../domain/uuid5.js';
import { isGraphAgent, type Agent, type GraphAgent } from '../runtime/agent.js';
import { drawAgent } from '../runtime/agent-drawing.js';
import type { AgentRegistry } from '../runtime/registry.js';

/**
 * Assistants of the LangGraph Server API. Every agent of the registry (graph agents and
 * defineAgent agents) is one assistant, derived, never stored: `graph_id` is the agent id,
 * `assistant_id` the UUIDv5 the LangGraph server gives a graph's default assistant. They are
 * the configured agents, so they cannot be created, changed or deleted through the API.
 */

/** LangGraph's namespace of assistant ids (`NAMESPACE_GRAPH` of @langchain/langgraph-api). */
const ASSISTANT_NAMESPACE = '6ba7b821-9dad-11d1-80b4-00c04fd430c8';
/** Every assistant's created_at and updated_at: when this process loaded this module. */
const STARTED_AT = new Date().toISOString();

export const ASSISTANT_FIELDS = ['assistant_id', 'graph_id', 'name', 'description', 'config', 'context', 'metadata', 'version', 'created_at', 'updated_at'] as const;

/** An assistant as LangGraph's server answers it. */
export interface Assistant {
  assistant_id: string;
  graph_id: string;
  name: string;
  description: string;
  config: JsonObject;
  context: JsonObject;
  metadata: JsonObject;
  version: number;
  created_at: string;
  updated_at: string;
}

type Agents = Pick<AgentRegistry, 'get' | 'list'>;

const ids = new Map<string, string>();

/** The assistant id of a graph id, as the LangGraph server derives it. */
export function assistantIdOf(graphId: string): string {
  let id = ids.get(graphId);
  if (id === undefined) ids.set(graphId, (id = uuid5(graphId, ASSISTANT_NAMESPACE)));
  return id;
}

/** The assistant an agent is. */
export function assistantOf(agent: Agent): Assistant {
  return {
    assistant_id: assistantIdOf(agent.id),
    graph_id: agent.id,
    name: agent.id,
    description: agent.description,
    config: {},
    context: {},
    metadata: { created_by: 'system' },
    version: 1,
    created_at: STARTED_AT,
    updated_at: STARTED_AT,
  };
}

/**
 * The agent an assistant id names: a graph id (agent id) as it is, or an assistant id derived
 * from one. Throws AppError `not_found` otherwise.
 */
export function resolveAssistant(agents: Agents, idOrGraphId: string): Agent {
  const agent = agents.get(idOrGraphId) ?? agents.list().find((a) => assistantIdOf(a.id) === idOrGraphId.toLowerCase());
  if (!agent) throw notFound(`Assistant "${idOrGraphId}"`);
  return agent;
}

export interface AssistantFilters {
  graph_id?: string | undefined;
  name?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** Whether `metadata` holds each key of `wanted` with its value. */
const holds = (metadata: JsonObject, wanted: Record<string, unknown> | undefined) =>
  Object.entries(wanted ?? {}).every(([key, value]) => isDeepStrictEqual(metadata[key], value));

/** The assistants matching every filter given. */
export function matchingAssistants(agents: Agents, filters: AssistantFilters): Assistant[] {
  return agents
    .list()
    .map(assistantOf)
    .filter(
      (a) =>
        (filters.graph_id === undefined || a.graph_id === filters.graph_id) &&
        (filters.name === undefined || a.name.toLowerCase().includes(filters.name.toLowerCase())) &&
        holds(a.metadata, filters.metadata),
    );
}

export interface AssistantSort {
  sort_by: 'assistant_id' | 'graph_id' | 'name' | 'created_at' | 'updated_at';
  sort_order: 'asc' | 'desc';
}

/** The assistants matching `filters`, sorted (ties by graph id). */
export function searchAssistants(agents: Agents, filters: AssistantFilters & AssistantSort): Assistant[] {
  const { sort_by: by, sort_order: order } = filters;
  const sign = order === 'asc' ? 1 : -1;
  return matchingAssistants(agents, filters).sort((a, b) => sign * a[by].localeCompare(b[by]) || a.graph_id.localeCompare(b.graph_id));
}

/** A graph agent's compiled graph and what src/langgraph/ tells about it (loaded only for graph agents). */
async function introspect(agent: GraphAgent) {
  const graph = await agent.graph.load({ configurable: {} });
  return { graph, describe: await import('../langgraph/introspect.js') };
}

/** The assistant's graph: nodes and edges, as LangGraph draws a graph (`xray`: subgraphs inside their nodes). */
export async function assistantGraph(agents: Agents, assistantId: string, xray: boolean | number | undefined): Promise<unknown> {
  const agent = resolveAssistant(agents, assistantId);
  if (!isGraphAgent(agent)) return drawAgent(agent);
  const { graph, describe } = await introspect(agent);
  return describe.drawGraph(graph, xray);
}

/** The JSON schemas of the assistant's state, input, output, config and context. */
export async function assistantSchemas(agents: Agents, assistantId: string): Promise<JsonObject> {
  const agent = resolveAssistant(agents, assistantId);
  if (!isGraphAgent(agent)) return { graph_id: agent.id, state_schema: {}, input_schema: {}, output_schema: {}, config_schema: null, context_schema: null };
  const { graph, describe } = await introspect(agent);
  const schemas = await describe.graphSchemas(graph);
  // As the LangGraph server: a JS graph's config and context schemas are one.
  return { graph_id: agent.id, state_schema: schemas.state, input_schema: schemas.input, output_schema: schemas.output, config_schema: schemas.config, context_schema: schemas.config };
}

/** The assistant's versions (its one version) holding `metadata`, paged. */
export function assistantVersions(agents: Agents, assistantId: string, page: { metadata?: Record<string, unknown> | undefined; limit: number; offset: number }): Omit<Assistant, 'updated_at'>[] {
  const { updated_at: _updated, ...version } = assistantOf(resolveAssistant(agents, assistantId));
  const kept = holds(version.metadata, page.metadata) ? [version] : [];
  return kept.slice(page.offset, page.offset + page.limit);
}

/** Creating, changing or deleting an assistant: refused (`conflict`) after checking it exists (not for a creation). */
export function refuseAssistantChange(agents: Agents, what: 'created' | 'changed' | 'deleted', assistantId?: string): never {
  if (assistantId !== undefined) resolveAssistant(agents, assistantId);
  throw conflict(`Assistants are the configured agents and graphs (AGENTS_MODULE, LANGGRAPH_CONFIG): they cannot be ${what} through the API.`);
}
