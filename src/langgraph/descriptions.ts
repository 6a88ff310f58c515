import type { GraphDescriptions } from '../ports/graph-threads.js';
import type { GraphLoader } from './graph-loader.js';

/**
 * What the LangGraph Server API tells about a graph agent's graph, built with an assistant's
 * `configurable` (not on a tenant's storage: nothing is read or written). The introspection
 * (introspect.ts: JSON schemas through @langchain/core, TypeScript types read in a child process)
 * is imported at the first question, not with the plug-in.
 */
export function createGraphDescriptions(graphs: Pick<GraphLoader, 'requireSource'>): GraphDescriptions {
  const described = async (agentId: string, configurable: Record<string, unknown>) => {
    const source = graphs.requireSource(agentId);
    const graph = await source.load({ configurable });
    return { source, graph, introspect: await import('./introspect.js') };
  };
  return {
    async drawGraph(agentId, configurable, xray) {
      const { graph, introspect } = await described(agentId, configurable);
      return introspect.drawGraph(graph, xray);
    },
    async graphSchemas(agentId, configurable) {
      const { source, graph, introspect } = await described(agentId, configurable);
      return introspect.graphSchemas(graph, source);
    },
    async subgraphSchemas(agentId, configurable, namespace, recurse) {
      const { source, graph, introspect } = await described(agentId, configurable);
      return introspect.subgraphSchemas(graph, source, namespace, recurse);
    },
  };
}
