import { existsSync } from 'node:fs';
import { END, START } from '@langchain/langgraph';
import type { Logger } from 'pino';
import { ConfigError, isLangGraphConfigJson } from '../config.js';
import type { GraphAgent } from '../runtime/agent.js';
import type { GraphSource } from '../runtime/graph-engine.js';
import { importAgentsModule } from '../runtime/import-module.js';
import { describeLoadError } from '../runtime/load-error.js';
import { applyEnv, configError, readLangGraphJson, type GraphEntry } from './langgraph-json.js';
import { registerSdkLogger } from './sdk-logger.js';

/*
 * Exports are recognised by their shape, not with instanceof: a graph file resolves
 * @langchain/langgraph from its own folder, which may hold another copy than agentplane's.
 */

/** What a compiled graph (a Pregel) answers to `getGraphAsync()` / `getGraph()`: its nodes by id. */
interface DrawnGraph {
  nodes: Record<string, unknown>;
}

interface CompiledGraph {
  invoke: (...args: unknown[]) => unknown;
  stream: (...args: unknown[]) => unknown;
  getGraphAsync?: () => Promise<DrawnGraph>;
  getGraph?: () => DrawnGraph;
}

interface UncompiledGraph {
  compile: () => unknown;
}

type GraphFactory = (config: Record<string, unknown>) => unknown;

const isCompiled = (value: unknown): value is CompiledGraph => {
  const graph = value as Partial<CompiledGraph> | null;
  return (
    typeof graph === 'object' && graph !== null && typeof graph.invoke === 'function' && typeof graph.stream === 'function' &&
    (typeof graph.getGraphAsync === 'function' || typeof graph.getGraph === 'function')
  );
};

const isUncompiled = (value: unknown): value is UncompiledGraph =>
  typeof value === 'object' && value !== null && typeof (value as Partial<UncompiledGraph>).compile === 'function';

/** What a function export is given at load time, to learn the graph's nodes. */
const LOAD_CONFIG = Object.freeze({ configurable: {} });

const firstLine = (error: unknown): string => String(error instanceof Error ? error.message : error).split('\n')[0]!;

/** A graph's defaults of LANGGRAPH_CONFIG: its system assistant's config and context on LangGraph's server. */
export interface GraphDefaults {
  /** A RunnableConfig: `configurable`, `tags`, `metadata`, `recursion_limit`. */
  config: Record<string, unknown>;
  context?: Record<string, unknown>;
}

/**
 * The graphs of a `langgraph.json` as agents, in its order. Its `env` is applied first (a
 * variable already set keeps its value; a .env file it names that does not exist is one
 * warning of `logger`, as LangGraph's CLI goes on without it); each graph file is imported once, however many
 * graphs it holds. An export may be a compiled graph, an uncompiled `StateGraph` (compiled
 * here, once, without a checkpointer), a Promise of either (awaited, as LangGraph's server
 * does), or a function, sync or async, given the run's config and answering either (called
 * once here with `{ configurable: {} }` to learn the nodes). Before the files are imported,
 * `logger` becomes the one `getLogger()` of `@langchain/langgraph-sdk/logging` answers.
 * LANGGRAPH_CONFIG (the environment's, else the file's `env`), when it is a JSON object, gives
 * per graph id a default config and context, as on LangGraph's server.
 * Every fault is a ConfigError of SERVICE_LANGGRAPH_JSON (or LANGGRAPH_CONFIG) in one line; an
 * error a graph module throws while loading is named with its file and line.
 */
export async function loadGraphAgents(configPath: string, options: { logger?: Logger } = {}): Promise<GraphAgent[]> {
  const config = readLangGraphJson(configPath);
  if (config.missingEnvFile) options.logger?.warn(`${config.path}: "env" names ${config.missingEnvFile}, which does not exist; going on without it`);
  applyEnv(config.env);
  const defaults = defaultsOf(isLangGraphConfigJson(process.env.LANGGRAPH_CONFIG) ? process.env.LANGGRAPH_CONFIG : config.env.LANGGRAPH_CONFIG);
  if (options.logger) registerSdkLogger(options.logger);
  const modules = new Map<string, Promise<Record<string, unknown>>>();
  const agents: GraphAgent[] = [];
  for (const entry of config.graphs) {
    const fail = (detail: string) => configError(config.path, `graph "${entry.id}" (${entry.spec}): ${detail}`);
    if (!existsSync(entry.file)) throw fail(`no file at ${entry.file}`);
    if (!modules.has(entry.file)) modules.set(entry.file, importGraphFile(entry.file));
    const exports = await modules.get(entry.file)!.catch((error: unknown) => {
      if ((error as Error | null)?.name === 'ConfigError') throw error;
      throw fail(describeLoadError(entry.file, error));
    });
    if (!Object.hasOwn(exports, entry.exportName)) {
      throw fail(`${entry.file} has no export "${entry.exportName}" (its exports: ${Object.keys(exports).join(', ') || 'none'})`);
    }
    const source = await graphSource(entry, await awaitedExport(exports[entry.exportName], fail), fail);
    agents.push(graphAgent(entry, source.nodes, source.load, defaults[entry.id]));
  }
  return agents;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The export, awaited when it is a Promise (`export const graph = (async () => …)()`). */
async function awaitedExport(exported: unknown, fail: (detail: string) => Error): Promise<unknown> {
  if (!isObject(exported) || typeof exported.then !== 'function') return exported;
  try {
    return await exported;
  } catch (error) {
    throw fail(`the export is a Promise that rejected: ${firstLine(error)}`);
  }
}

/** LANGGRAPH_CONFIG as LangGraph's server reads it: `{ "<graph id>": { "configurable": …, "context": …, … } }`. */
function defaultsOf(json: string | undefined): Record<string, GraphDefaults> {
  if (json === undefined || json.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    throw new ConfigError('LANGGRAPH_CONFIG', `not valid JSON: ${firstLine(error)}`);
  }
  if (!isObject(parsed)) throw new ConfigError('LANGGRAPH_CONFIG', 'expected a JSON object of graph ids, each with its default config: { "<graph id>": { "configurable": { … }, "context": { … } } }');
  const defaults: Record<string, GraphDefaults> = {};
  for (const [id, value] of Object.entries(parsed)) {
    if (!isObject(value)) throw new ConfigError('LANGGRAPH_CONFIG', `the entry of "${id}" is not an object`);
    const { context, ...rest } = value;
    if (context !== undefined && context !== null && !isObject(context)) throw new ConfigError('LANGGRAPH_CONFIG', `the "context" of "${id}" is not an object`);
    if (rest.configurable !== undefined && !isObject(rest.configurable)) throw new ConfigError('LANGGRAPH_CONFIG', `the "configurable" of "${id}" is not an object`);
    defaults[id] = { config: rest, ...(isObject(context) ? { context } : {}) };
  }
  return defaults;
}

async function importGraphFile(file: string): Promise<Record<string, unknown>> {
  return (await importAgentsModule(file)).exports;
}

const NOT_A_GRAPH = 'is not a graph: export a compiled graph, a StateGraph, or a function that returns one';

/** The compiled graph of what an export is, or of what a function export answers; undefined for anything else. */
const compiledOf = (value: unknown): CompiledGraph | undefined => {
  const graph = isUncompiled(value) ? value.compile() : value;
  return isCompiled(graph) ? graph : undefined;
};

/** {@link compiledOf} at load time: a StateGraph that does not compile is a fault of the file. */
function compiledAtLoad(value: unknown, fail: (detail: string) => Error): CompiledGraph | undefined {
  try {
    return compiledOf(value);
  } catch (error) {
    throw fail(`the StateGraph does not compile: ${firstLine(error)}`);
  }
}

/** How to get the graph for a run, and the names of its nodes (the export's graph, or the function's answer at load). */
async function graphSource(entry: GraphEntry, exported: unknown, fail: (detail: string) => Error): Promise<{ nodes: string[]; load: GraphSource['load'] }> {
  if (typeof exported !== 'function') {
    const graph = compiledAtLoad(exported, fail);
    if (!graph) throw fail(`the export ${NOT_A_GRAPH}`);
    return { nodes: await nodeNames(graph), load: async () => graph };
  }
  const factory = exported as GraphFactory;
  let answer: unknown;
  try {
    answer = await factory(LOAD_CONFIG);
  } catch (error) {
    throw fail(`${entry.exportName}({ configurable: {} }) threw: ${firstLine(error)}`);
  }
  const graph = compiledAtLoad(answer, fail);
  if (!graph) throw fail(`what the function returns ${NOT_A_GRAPH}`);
  const load = async (config: Record<string, unknown>) => {
    const compiled = compiledOf(await factory(config));
    if (!compiled) throw new Error(`Graph "${entry.id}" (${entry.spec}): what the function returned ${NOT_A_GRAPH}.`);
    return compiled;
  };
  return { nodes: await nodeNames(graph), load };
}

async function nodeNames(graph: CompiledGraph): Promise<string[]> {
  const drawn = graph.getGraphAsync ? await graph.getGraphAsync() : graph.getGraph!();
  return Object.keys(drawn.nodes).filter((name) => name !== START && name !== END);
}

/**
 * A graph as an agent the registry, the routes and the run lifecycle know: its id, its node
 * names (GET /api/agents), and the {@link GraphSource} the LangGraph engine runs.
 */
function graphAgent(entry: GraphEntry, names: readonly string[], load: GraphSource['load'], defaults: GraphDefaults | undefined): GraphAgent {
  const graph: GraphSource = Object.freeze({ kind: 'langgraph', graphId: entry.id, spec: entry.spec, file: entry.file, exportName: entry.exportName, load, ...(defaults ? { defaults } : {}) });
  return Object.freeze({
    kind: 'graph',
    id: entry.id,
    description: entry.description ?? `LangGraph graph ${entry.spec}`,
    entry: START,
    nodeNames: Object.freeze([...names]),
    graph,
    ...(entry.maxConcurrency === undefined ? {} : { maxConcurrency: entry.maxConcurrency }),
  });
}
