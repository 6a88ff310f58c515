import { END_NODE } from '../domain/types.js';
import type { NativeAgent } from './agent.js';

/** A node of a drawn agent, as LangChain's `Graph.toJSON()` writes a graph's nodes. */
export interface DrawnNode {
  id: string;
  type: 'schema' | 'runnable';
  data: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

/** An edge of a drawn agent; `conditional` when an edge function picks it. */
export interface DrawnEdge {
  source: string;
  target: string;
  conditional: boolean;
}

/**
 * A defineAgent agent drawn as LangGraph draws a compiled graph (GET /assistants/{id}/graph):
 * `__start__` to the entry, each fixed edge, a node without an edge to `__end__`, and an edge
 * function as conditional edges to every other node and `__end__` (what LangGraph draws for a
 * branch without a path map: the function's targets are only known at run time).
 */
export function drawAgent(agent: NativeAgent): { nodes: DrawnNode[]; edges: DrawnEdge[] } {
  const names = Object.keys(agent.nodes);
  const edges: DrawnEdge[] = [{ source: '__start__', target: agent.entry, conditional: false }];
  for (const name of names) {
    const edge = agent.edges[name];
    if (typeof edge === 'function') {
      for (const target of [...names.filter((n) => n !== name), END_NODE]) edges.push({ source: name, target, conditional: true });
    } else {
      edges.push({ source: name, target: edge ?? END_NODE, conditional: false });
    }
  }
  const schemaNode = (id: string): DrawnNode => ({ id, type: 'schema', data: {} });
  const nodes: DrawnNode[] = [
    schemaNode('__start__'),
    ...names.map((name): DrawnNode => ({ id: name, type: 'runnable', data: { id: ['agentplane', 'node'], name }, metadata: {} })),
    ...(edges.some((e) => e.target === END_NODE) ? [schemaNode(END_NODE)] : []),
  ];
  return { nodes, edges };
}
