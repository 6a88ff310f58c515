import type { Logger } from 'pino';
import { ConfigError } from '../config.js';
import { isGraphAgent, type Agent, type GraphAgent } from '../runtime/agent.js';
import type { CreateGraphEngine } from '../runtime/graph-engine.js';

const INSTALL = 'graphs need @langchain/langgraph and @langchain/core: npm install @langchain/langgraph @langchain/core';

// "Cannot find package '@langchain/core' imported from …" (Node), "Cannot find module '@langchain/…'" (require, tsx).
const MISSING_LANGCHAIN = /Cannot find (?:package|module) '@langchain\//;

/**
 * The ConfigError that says what to install when `error` is the failure to import src/langgraph/
 * because `@langchain/langgraph` or `@langchain/core` (optional peer dependencies, which
 * LangGraph itself imports) cannot be resolved; undefined for any other error.
 */
export function missingLangGraph(error: unknown): ConfigError | undefined {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return undefined;
  return MISSING_LANGCHAIN.test((error as Error).message) ? new ConfigError('SERVICE_LANGGRAPH_JSON', INSTALL) : undefined;
}

/**
 * The graphs of the `langgraph.json` at `configPath` (SERVICE_LANGGRAPH_JSON) as agents. The
 * LangGraph plug-in's face (src/langgraph/index.ts) is imported here, only when graphs are
 * configured: a process without them needs no `@langchain/*` package; a version agentplane does
 * not run is refused before it is imported, by the plug-in's light face (src/langgraph/light.ts,
 * which imports nothing of `@langchain/*`). Every fault is a one-line ConfigError.
 */
export async function loadGraphs(configPath: string, logger?: Logger): Promise<GraphAgent[]> {
  // Before anything of @langchain/* is imported: an unsupported LangGraph.js is refused in one line.
  (await import('../langgraph/light.js')).checkLangGraphVersions(configPath);
  let plugin: typeof import('../langgraph/index.js');
  try {
    plugin = await import('../langgraph/index.js');
  } catch (error) {
    throw missingLangGraph(error) ?? error;
  }
  return plugin.loadGraphAgents(configPath, { logger });
}

/**
 * The LangGraph plug-in's engine, when `agents` holds graphs (undefined otherwise): what the
 * composition root builds the graph engine from. Chosen from the registry, however its graphs
 * came (SERVICE_LANGGRAPH_JSON, or graphs built in code), so agent data carries no engine.
 */
export async function graphEngineFor(agents: { list(): readonly Agent[] }): Promise<CreateGraphEngine | undefined> {
  if (!agents.list().some(isGraphAgent)) return undefined;
  return (await import('../langgraph/index.js')).createGraphEngine;
}

/**
 * The agents of a process beside its graphs. A graph takes the place of a built-in agent of
 * the same id (`ownAgents` unset: the built-ins are examples); the same id as one of the
 * agents of `ownAgents` (AGENTS_MODULE, or the agents given to `createAgentplane`) is a
 * ConfigError naming both.
 */
export function withGraphs(agents: readonly Agent[], graphs: readonly GraphAgent[], ownAgents: string | undefined): Agent[] {
  const graphIds = new Set(graphs.map((graph) => graph.id));
  const clash = ownAgents === undefined ? undefined : agents.find((agent) => graphIds.has(agent.id));
  if (clash) {
    const graph = graphs.find((g) => g.id === clash.id)!;
    throw new ConfigError(
      'SERVICE_LANGGRAPH_JSON',
      `the graph "${clash.id}" (${graph.graph.spec}) has the id of an agent of ${ownAgents}; rename one of them`,
    );
  }
  return [...agents.filter((agent) => !graphIds.has(agent.id)), ...graphs];
}
