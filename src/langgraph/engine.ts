import type { CreateGraphEngine } from '../runtime/graph-engine.js';
import { createGraphDescriptions } from './descriptions.js';
import { graphLoader } from './graph-loader.js';
import { createGraphRunEngine } from './run-engine.js';
import { createGraphThreads } from './threads.js';

/**
 * What src/langgraph brings the composition root: the engine that drives the runs of graph
 * agents, and what the LangGraph Server API asks of them besides (their threads' operations,
 * their graphs' drawings and schemas), on one graph loader.
 */
export const createGraphEngine: CreateGraphEngine = (deps) => {
  const graphs = graphLoader(deps);
  return { engine: createGraphRunEngine(graphs), threads: { ...createGraphThreads(deps, graphs), ...createGraphDescriptions(graphs) } };
};
