import { createGraphEngine } from '../../src/langgraph/engine.js';
import type { GraphAgent } from '../../src/runtime/agent.js';

/**
 * A compiled LangGraph graph (or a function of the run's config answering one) as the agent
 * the registry holds, as the `langgraph.json` loader makes it: for tests that build their
 * graphs in code.
 */
export function graphAgent(id: string, graph: unknown, nodes: readonly string[] = []): GraphAgent {
  return Object.freeze({
    kind: 'graph' as const,
    id,
    description: `LangGraph graph ${id} (test)`,
    entry: '__start__',
    nodeNames: [...nodes],
    graph: {
      kind: 'langgraph' as const,
      graphId: id,
      spec: `test:${id}`,
      load: async (config: Record<string, unknown>) => (typeof graph === 'function' ? (graph as (c: Record<string, unknown>) => unknown)(config) : graph),
      createEngine: createGraphEngine,
    },
  });
}
