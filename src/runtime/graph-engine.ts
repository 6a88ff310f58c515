import type { GraphCheckpointStore, GraphItemStore } from '../ports/graph-storage.js';
import type { GraphThreads } from '../ports/graph-threads.js';
import type { Store } from '../ports/store.js';
import type { GraphAgent } from './agent.js';
import type { RunEngine } from './run/run-engine.js';

export type { GraphSource } from './agent.js';

/** What the engine of another kind of agent (a LangGraph graph) is built from. */
export interface GraphEngineDeps {
  store: Pick<Store, 'sessions' | 'runs' | 'approvals'>;
  /** The graph agent of an agent id (the registry's). */
  agents: { graph(id: string): GraphAgent | undefined };
  /** The backend's LangGraph storage: checkpoints per thread (a session), memory items per tenant. */
  checkpoints: GraphCheckpointStore;
  items: GraphItemStore;
  /** SERVICE_CHECKPOINTS_RETAIN: checkpoints kept per thread and namespace. */
  retain: number;
  /** SERVICE_MAX_STATE_BYTES: the largest checkpoint a graph may write. */
  maxCheckpointBytes: number;
  /** RUN_STEP_LIMIT: a graph's recursionLimit unless it was bound with its own. */
  stepLimit: number;
}

/**
 * Builds the LangGraph plug-in's engine (src/langgraph/index.ts; src/main/graphs.ts hands it to
 * the composition root): the {@link RunEngine} of graph agents' runs, and the
 * {@link GraphThreads} of their sessions.
 */
export type CreateGraphEngine = (deps: GraphEngineDeps) => { engine: RunEngine<GraphAgent>; threads: GraphThreads };
