import { randomUUID } from 'node:crypto';
import { AppError, badRequest, conflict, notFound } from '../domain/errors.js';
import { jsonContains } from '../domain/json-contains.js';
import { MAX_SESSION_METADATA_BYTES } from '../domain/session-metadata.js';
import type { JsonObject } from '../domain/types.js';
import { uuid5 } from '../domain/uuid5.js';
import type { AssistantRecord, AssistantVersionRecord } from '../ports/assistant-store.js';
import type { GraphDescriptions } from '../ports/graph-threads.js';
import { isGraphAgent, type Agent, type GraphAgent } from '../runtime/agent.js';
import { drawAgent } from '../runtime/agent-drawing.js';
import type { LangGraphDeps } from './deps.js';

/**
 * Assistants of the LangGraph Server API: each agent of the registry (graph agents and
 * defineAgent agents) is its graph's default assistant, derived, never stored, the same for
 * every tenant: `graph_id` is the agent id, `assistant_id` the UUIDv5 the LangGraph server
 * gives a graph's default assistant, `metadata` `{"created_by":"system"}`; it cannot be changed
 * or deleted (409). Beside them, each tenant stores its own assistants of the graphs
 * (`POST /assistants`): a graph with its `config`, `context`, `metadata`, `name` and
 * `description`, versioned (every change is a new version, and any version can be made the
 * latest again). A run on an assistant runs its graph with the assistant's config and context
 * under the run's own.
 */

/** LangGraph's namespace of assistant ids (`NAMESPACE_GRAPH` of @langchain/langgraph-api). */
const ASSISTANT_NAMESPACE = '6ba7b821-9dad-11d1-80b4-00c04fd430c8';
/** Every default assistant's created_at and updated_at: when this process loaded this module. */
const STARTED_AT = new Date().toISOString();
/** How many times a change is tried again when another change of the assistant came between its read and its write. */
const CHANGE_ATTEMPTS = 5;

export const ASSISTANT_FIELDS = ['assistant_id', 'graph_id', 'name', 'description', 'config', 'context', 'metadata', 'version', 'created_at', 'updated_at'] as const;

/** An assistant as LangGraph's server answers it. */
export type Assistant = AssistantRecord;
/** One version of an assistant. */
export type AssistantVersion = AssistantVersionRecord;

type Agents = LangGraphDeps['agents'];
type AssistantDeps = Pick<LangGraphDeps, 'agents' | 'assistants' | 'graphs'>;

const ids = new Map<string, string>();

/** The assistant id of a graph id, as the LangGraph server derives it. */
export function assistantIdOf(graphId: string): string {
  let id = ids.get(graphId);
  if (id === undefined) ids.set(graphId, (id = uuid5(graphId, ASSISTANT_NAMESPACE)));
  return id;
}

/** The default assistant an agent is. */
export function assistantOf(agent: Agent): Assistant {
  return {
    assistant_id: assistantIdOf(agent.id),
    graph_id: agent.id,
    name: agent.id,
    description: agent.description,
    // A graph's defaults (LANGGRAPH_CONFIG) are its system assistant's config and context, as on LangGraph's server.
    config: isGraphAgent(agent) && agent.graph.defaults ? (structuredClone(agent.graph.defaults.config) as JsonObject) : {},
    context: isGraphAgent(agent) && agent.graph.defaults?.context ? (structuredClone(agent.graph.defaults.context) as JsonObject) : {},
    metadata: { created_by: 'system' },
    version: 1,
    created_at: STARTED_AT,
    updated_at: STARTED_AT,
  };
}

/** The agent whose default assistant an id names: its graph id (agent id) as it is, or the id derived from it. */
function defaultAgent(agents: Agents, idOrGraphId: string): Agent | undefined {
  return agents.get(idOrGraphId) ?? agents.list().find((a) => assistantIdOf(a.id) === idOrGraphId.toLowerCase());
}

/** An assistant and the agent that runs it. */
export interface ResolvedAssistant {
  assistant: Assistant;
  agent: Agent;
  /** A tenant's stored assistant (not a graph's default). */
  stored: boolean;
}

/**
 * The assistant an id names in the tenant: a graph's default (by its id or graph id), else one
 * the tenant stored. Throws AppError `not_found` for neither.
 */
export async function getAssistant(deps: AssistantDeps, tenant: string, idOrGraphId: string): Promise<{ assistant: Assistant; agent?: Agent; stored: boolean }> {
  const agent = defaultAgent(deps.agents, idOrGraphId);
  if (agent) return { assistant: assistantOf(agent), agent, stored: false };
  const found = await deps.assistants.get(tenant, idOrGraphId.toLowerCase());
  if (!found) throw notFound(`Assistant "${idOrGraphId}"`);
  const graph = deps.agents.get(found.assistant.graph_id);
  return { assistant: found.assistant, ...(graph ? { agent: graph } : {}), stored: true };
}

/**
 * The assistant an id names and the agent that runs it (what a run, a cron, a graph drawing
 * need). Throws `not_found` for no assistant, `unknown_agent` for a stored assistant whose
 * graph is no longer registered.
 */
export async function resolveAssistant(deps: AssistantDeps, tenant: string, idOrGraphId: string): Promise<ResolvedAssistant> {
  const { assistant, agent, stored } = await getAssistant(deps, tenant, idOrGraphId);
  if (!agent) throw new AppError('unknown_agent', `The graph "${assistant.graph_id}" of assistant "${assistant.assistant_id}" is no longer registered.`);
  return { assistant, agent, stored };
}

/** The graph agent a stored assistant runs: a registered graph (a defineAgent agent takes no config or context). */
function graphOf(agents: Agents, graphId: string): GraphAgent {
  const agent = agents.get(graphId);
  if (!agent) throw notFound(`Graph "${graphId}"`);
  if (!isGraphAgent(agent)) {
    throw badRequest(`graph_id: "${graphId}" is a defineAgent agent, not a graph: only graphs (SERVICE_LANGGRAPH_JSON) take stored assistants; use its default assistant.`);
  }
  return agent;
}

/** An assistant's fields take at most MAX_SESSION_METADATA_BYTES of JSON (as a thread's metadata): 413 past it. */
function checkSize(assistant: AssistantRecord): void {
  const bytes = Buffer.byteLength(JSON.stringify(assistant));
  if (bytes > MAX_SESSION_METADATA_BYTES) {
    throw new AppError('payload_too_large', `The assistant would take ${bytes} bytes of JSON, more than the limit of ${MAX_SESSION_METADATA_BYTES}.`);
  }
}

/** A default assistant cannot be changed: 409. */
function refuseDefault(assistant: Assistant, what: 'changed' | 'deleted'): never {
  throw conflict(
    `Assistant "${assistant.assistant_id}" is the default assistant of graph "${assistant.graph_id}" (created_by system): it cannot be ${what}; create an assistant of the graph instead.`,
  );
}

/** `POST /assistants`. */
export interface AssistantCreate {
  graph_id: string;
  assistant_id?: string | undefined;
  config?: JsonObject | undefined;
  context?: JsonObject | undefined;
  metadata?: JsonObject | undefined;
  name?: string | undefined;
  description?: string | null | undefined;
  if_exists?: 'raise' | 'do_nothing' | undefined;
}

/**
 * Stores an assistant of a graph in the tenant (its version 1). An id already taken (a stored
 * assistant, or a graph's default) is 409 `conflict` under `if_exists: raise` (the default);
 * `do_nothing` answers the existing assistant. Throws `not_found` (no such graph),
 * `bad_request` (a defineAgent agent), `payload_too_large` (past the tenant's cap, or over 64
 * KiB of JSON).
 */
export async function createAssistant(deps: AssistantDeps, tenant: string, body: AssistantCreate): Promise<Assistant> {
  const assistantId = (body.assistant_id ?? randomUUID()).toLowerCase();
  const taken = defaultAgent(deps.agents, assistantId);
  if (taken) {
    if (body.if_exists === 'do_nothing') return assistantOf(taken);
    throw conflict(`Assistant "${assistantId}" already exists.`);
  }
  graphOf(deps.agents, body.graph_id);
  const now = new Date().toISOString();
  const assistant: AssistantRecord = {
    assistant_id: assistantId,
    graph_id: body.graph_id,
    // As LangGraph's server names an assistant created without a name.
    name: body.name ?? 'Untitled',
    description: body.description ?? null,
    config: body.config ?? {},
    context: body.context ?? {},
    metadata: body.metadata ?? {},
    version: 1,
    created_at: now,
    updated_at: now,
  };
  checkSize(assistant);
  const existing = await deps.assistants.create(tenant, assistant);
  if (!existing) return assistant;
  if (body.if_exists === 'do_nothing') return existing;
  throw conflict(`Assistant "${assistantId}" already exists.`);
}

/** `PATCH /assistants/{id}`: what is given replaces the assistant's, `metadata` is merged into it (shallow). */
export interface AssistantPatch {
  graph_id?: string | undefined;
  config?: JsonObject | undefined;
  context?: JsonObject | undefined;
  metadata?: JsonObject | undefined;
  name?: string | undefined;
  description?: string | null | undefined;
}

/** The stored assistant an id names (a default one is refused with 409 for `what`); `not_found` otherwise. */
async function storedAssistant(deps: AssistantDeps, tenant: string, assistantId: string, what: 'changed' | 'deleted') {
  const agent = defaultAgent(deps.agents, assistantId);
  if (agent) refuseDefault(assistantOf(agent), what);
  const found = await deps.assistants.get(tenant, assistantId.toLowerCase());
  if (!found) throw notFound(`Assistant "${assistantId}"`);
  return found;
}

/** Writes a change read from the assistant's current state, again while another change came first. */
async function changeAssistant(
  deps: AssistantDeps,
  tenant: string,
  assistantId: string,
  change: (current: AssistantRecord, versions: number, now: string) => Promise<{ latest: AssistantRecord; addsVersion: boolean }>,
): Promise<Assistant> {
  for (let attempt = 1; ; attempt += 1) {
    const { assistant: current, versions } = await storedAssistant(deps, tenant, assistantId, 'changed');
    const { latest, addsVersion } = await change(current, versions, new Date().toISOString());
    checkSize(latest);
    const done = addsVersion ? await deps.assistants.addVersion(tenant, latest, versions) : await deps.assistants.setLatest(tenant, latest, versions);
    if (done === 'ok') return latest;
    if (done === 'missing') throw notFound(`Assistant "${assistantId}"`);
    if (attempt === CHANGE_ATTEMPTS) throw conflict(`Assistant "${assistantId}" is being changed by other requests; retry.`);
  }
}

/**
 * Changes a stored assistant: a new version (the highest so far + 1) that becomes its latest.
 * A graph's default assistant is 409; `not_found`, `bad_request` and `payload_too_large` (past
 * the versions cap) as for a creation.
 */
export function updateAssistant(deps: AssistantDeps, tenant: string, assistantId: string, patch: AssistantPatch): Promise<Assistant> {
  if (patch.graph_id !== undefined) graphOf(deps.agents, patch.graph_id);
  return changeAssistant(deps, tenant, assistantId, async (current, versions, now) => ({
    addsVersion: true,
    latest: {
      ...current,
      ...(patch.graph_id === undefined ? {} : { graph_id: patch.graph_id }),
      ...(patch.config === undefined ? {} : { config: patch.config }),
      ...(patch.context === undefined ? {} : { context: patch.context }),
      ...(patch.name === undefined ? {} : { name: patch.name }),
      ...(patch.description === undefined ? {} : { description: patch.description }),
      metadata: { ...current.metadata, ...patch.metadata },
      version: versions + 1,
      updated_at: now,
    },
  }));
}

/** Makes one of a stored assistant's versions its latest (every field of that version); `not_found` for no such version. */
export function setLatestVersion(deps: AssistantDeps, tenant: string, assistantId: string, version: number): Promise<Assistant> {
  return changeAssistant(deps, tenant, assistantId, async (current, _versions, now) => {
    const all = (await deps.assistants.versions(tenant, current.assistant_id)) ?? [];
    const chosen = all.find((v) => v.version === version);
    if (!chosen) throw notFound(`Version ${version} of assistant "${assistantId}"`);
    return { addsVersion: false, latest: { ...chosen, created_at: current.created_at, updated_at: now } };
  });
}

/** Removes a stored assistant and its versions (a default one is 409); answers the removed assistant. */
export async function deleteStoredAssistant(deps: AssistantDeps, tenant: string, assistantId: string): Promise<Assistant> {
  const { assistant } = await storedAssistant(deps, tenant, assistantId, 'deleted');
  if (!(await deps.assistants.delete(tenant, assistant.assistant_id))) throw notFound(`Assistant "${assistantId}"`);
  return assistant;
}

/** The LangGraph plug-in's descriptions of graphs, and the assistant's `configurable` its graph is built with. */
function described(deps: AssistantDeps, assistant: Assistant): { graphs: GraphDescriptions; configurable: Record<string, unknown> } {
  // The composition root loads the plug-in whenever the registry holds a graph agent.
  if (!deps.graphs) throw new AppError('internal', 'A graph agent without the LangGraph plug-in loaded.');
  return { graphs: deps.graphs, configurable: (assistant.config.configurable ?? {}) as Record<string, unknown> };
}

/** The assistant's graph: nodes and edges, as LangGraph draws a graph (`xray`: subgraphs inside their nodes). */
export async function assistantGraph(deps: AssistantDeps, tenant: string, assistantId: string, xray: boolean | number | undefined): Promise<unknown> {
  const { agent, assistant } = await resolveAssistant(deps, tenant, assistantId);
  if (!isGraphAgent(agent)) return drawAgent(agent);
  const { graphs, configurable } = described(deps, assistant);
  return graphs.drawGraph(agent.id, configurable, xray);
}

/** The JSON schemas of the assistant's state, input, output, config and context. */
export async function assistantSchemas(deps: AssistantDeps, tenant: string, assistantId: string): Promise<JsonObject> {
  const { agent, assistant } = await resolveAssistant(deps, tenant, assistantId);
  if (!isGraphAgent(agent)) return { graph_id: agent.id, state_schema: {}, input_schema: {}, output_schema: {}, config_schema: null, context_schema: null };
  const { graphs, configurable } = described(deps, assistant);
  const schemas = await graphs.graphSchemas(agent.id, configurable);
  // As the LangGraph server: a JS graph's config and context schemas are one.
  return { graph_id: agent.id, state_schema: schemas.state, input_schema: schemas.input, output_schema: schemas.output, config_schema: schemas.config, context_schema: schemas.config };
}

/** The assistant's subgraphs (under `namespace`; every depth with `recurse`), each with its schemas, by namespace. */
export async function assistantSubgraphs(deps: AssistantDeps, tenant: string, assistantId: string, namespace: string | undefined, recurse: boolean): Promise<JsonObject> {
  const { agent, assistant } = await resolveAssistant(deps, tenant, assistantId);
  if (!isGraphAgent(agent)) return {};
  const { graphs, configurable } = described(deps, assistant);
  return (await graphs.subgraphSchemas(agent.id, configurable, namespace, recurse)) as unknown as JsonObject;
}

/** The assistant's versions holding `metadata` (JSON containment), newest first, paged; a default assistant has its one version. */
export async function assistantVersions(
  deps: AssistantDeps,
  tenant: string,
  assistantId: string,
  page: { metadata?: Record<string, unknown> | undefined; limit: number; offset: number },
): Promise<AssistantVersion[]> {
  const { assistant, stored } = await getAssistant(deps, tenant, assistantId);
  let all: AssistantVersion[];
  if (stored) {
    all = (await deps.assistants.versions(tenant, assistant.assistant_id)) ?? [];
  } else {
    const { updated_at: _updated, ...version } = assistant;
    all = [version];
  }
  const kept = page.metadata === undefined ? all : all.filter((v) => jsonContains(v.metadata, page.metadata));
  return kept.slice(page.offset, page.offset + page.limit);
}

/** The run config keys an assistant's config gives a run (the others are ignored, as a run's). */
interface AssistantRunConfig {
  tags?: string[] | undefined;
  recursion_limit?: number | undefined;
  configurable?: Record<string, unknown> | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/**
 * A run's config and context under the assistant's, as LangGraph's server merges them: the
 * run's values win; `configurable` and `metadata` are merged key by key, `tags` and
 * `recursion_limit` are the run's when it gives them; `context` is merged key by key.
 */
export function withAssistant<C extends AssistantRunConfig>(
  assistant: Assistant,
  config: C | undefined,
  context: unknown,
): { config: C | AssistantRunConfig | undefined; context: unknown } {
  const base = assistant.config as AssistantRunConfig;
  const baseContext = assistant.context;
  const hasConfig = Object.keys(base).length > 0;
  const mergedConfig = !hasConfig
    ? config
    : {
        ...(config ?? {}),
        ...(base.tags !== undefined && config?.tags === undefined ? { tags: base.tags } : {}),
        ...(base.recursion_limit !== undefined && config?.recursion_limit === undefined ? { recursion_limit: base.recursion_limit } : {}),
        ...(base.configurable !== undefined || config?.configurable !== undefined ? { configurable: { ...base.configurable, ...config?.configurable } } : {}),
        ...(base.metadata !== undefined || config?.metadata !== undefined ? { metadata: { ...base.metadata, ...config?.metadata } } : {}),
      };
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  let mergedContext = context;
  if (Object.keys(baseContext).length > 0) {
    if (context === undefined || context === null) mergedContext = baseContext;
    else if (isObject(context)) mergedContext = { ...baseContext, ...context };
  }
  return { config: mergedConfig, context: mergedContext };
}
