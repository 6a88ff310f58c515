import { END_NODE, type JsonObject } from '../domain/types.js';

/** What a human answered to `ctx.interrupt`. */
export interface InterruptDecision {
  approved: boolean;
  comment: string;
}

/** What a node sees besides the state. */
export interface NodeContext {
  run_id: string;
  session_id: string;
  agent_id: string;
  tenant: string;
  /**
   * Asks a human. The first time, the run pauses here: an approval request is stored, the run
   * becomes `interrupted` and the worker moves on. Once answered, the node runs again from the
   * same checkpoint and this call returns the decision.
   */
  interrupt(request: { prompt: string }): Promise<InterruptDecision>;
}

/** A graph node: reads the state, returns a patch shallow-merged into it (or nothing). */
export type AgentNode = (state: JsonObject, ctx: NodeContext) => Promise<JsonObject | void> | JsonObject | void;

/** The next node after a node: fixed, or chosen from the state after the node ran. */
export type AgentEdge = string | ((state: JsonObject) => string);

export interface AgentDefinition {
  id: string;
  description: string;
  entry: string;
  nodes: Record<string, AgentNode>;
  /** Next node by node name; `__end__` ends the run. A node without an edge ends the run. */
  edges: Record<string, AgentEdge>;
}

export interface Agent extends Readonly<AgentDefinition> {
  /** The node after `node` for the given state; throws for an edge to an unknown node. */
  next(node: string, state: JsonObject): string;
}

/**
 * Validates an agent graph at definition time (fail fast): the entry and every fixed edge
 * target must be nodes, and every edge must start at a node.
 */
export function defineAgent(definition: AgentDefinition): Agent {
  const { id, entry, nodes, edges } = definition;
  const known = (name: string) => name === END_NODE || Object.hasOwn(nodes, name);
  if (!/^[A-Za-z0-9._:-]{1,128}$/.test(id)) throw new Error(`Agent id "${id}" is not a valid id.`);
  if (!Object.hasOwn(nodes, entry)) throw new Error(`Agent "${id}": entry "${entry}" is not a node.`);
  for (const [from, edge] of Object.entries(edges)) {
    if (!Object.hasOwn(nodes, from)) throw new Error(`Agent "${id}": edge from unknown node "${from}".`);
    if (typeof edge === 'string' && !known(edge)) throw new Error(`Agent "${id}": edge to unknown node "${edge}".`);
  }
  return Object.freeze({
    ...definition,
    next(node: string, state: JsonObject): string {
      const edge = edges[node];
      const target = edge === undefined ? END_NODE : typeof edge === 'string' ? edge : edge(state);
      if (!known(target)) throw new Error(`Agent "${id}": node "${node}" leads to unknown node "${target}".`);
      return target;
    },
  });
}
