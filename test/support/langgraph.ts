import { createGraphEngine } from '../../src/langgraph/engine.js';
import type { Agent, NodeSpec } from '../../src/runtime/agent.js';

/**
 * A compiled LangGraph graph (or a function of the run's config answering one) as the agent
 * the registry holds, as the `langgraph.json` loader makes it: for tests that build their
 * graphs in code.
 */
export function graphAgent(id: string, graph: unknown, nodes: readonly string[] = []): Agent {
  const run = () => {
    throw new Error(`Graph "${id}" is run by the LangGraph engine.`);
  };
  const specs = new Map<string, Readonly<NodeSpec>>(nodes.map((name) => [name, { run }]));
  return Object.freeze({
    id,
    description: `LangGraph graph ${id} (test)`,
    entry: '__start__',
    nodes: Object.fromEntries(nodes.map((name) => [name, run])),
    edges: {},
    graph: {
      kind: 'langgraph' as const,
      graphId: id,
      spec: `test:${id}`,
      load: async (config: Record<string, unknown>) => (typeof graph === 'function' ? (graph as (c: Record<string, unknown>) => unknown)(config) : graph),
      createEngine: createGraphEngine,
    },
    next(): string {
      throw new Error(`Graph "${id}" has no edges of its own.`);
    },
    node(name: string) {
      return specs.get(name);
    },
  });
}
