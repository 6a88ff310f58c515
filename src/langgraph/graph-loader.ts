import type { Pregel } from '@langchain/langgraph';
import { AppError } from '../domain/errors.js';
import type { GraphEngineDeps, GraphSource } from '../runtime/graph-engine.js';
import { tenantGraphStorage, withTenantStorage, type TenantGraphStorage } from './graph-storage.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any compiled graph, whatever its channels
export type AnyGraph = Pregel<any, any>;

/** How the LangGraph engine and the thread operations get a tenant's graph on agentplane's storage. */
export interface GraphLoader {
  /** The tenant's checkpointer, its checkpoints as the engine reads them, and its store. */
  storageOf(tenant: string): TenantGraphStorage;
  /** The graph of an agent id when it is a graph agent of this process, else `unknown_agent`. */
  requireSource(agentId: string): GraphSource;
  /** The graph for `config`, keeping its checkpoints and items in the tenant's storage. */
  graphFor(source: GraphSource, tenant: string, config: Record<string, unknown>): Promise<AnyGraph>;
  /** The recursion limit of a run: the graph's own (`withConfig`), else RUN_STEP_LIMIT; a client's `recursion_limit` (`asked`) only lowers it. */
  recursionLimitOf(graph: AnyGraph, asked?: number): number;
}

/** Tenants whose graph storage a loader keeps made. */
const KEPT_TENANT_STORAGES = 1024;

export function graphLoader(deps: GraphEngineDeps): GraphLoader {
  // A tenant's checkpointer and store hold no state of a run: made once per tenant and kept
  // (a state read and a run each ask for them), the kept ones let go all at once past a bound.
  const storages = new Map<string, TenantGraphStorage>();
  const storageOf = (tenant: string) => {
    let storage = storages.get(tenant);
    if (!storage) {
      if (storages.size >= KEPT_TENANT_STORAGES) storages.clear();
      storage = tenantGraphStorage({ tenant, checkpoints: deps.checkpoints, items: deps.items, retain: deps.retain, maxCheckpointBytes: deps.maxCheckpointBytes });
      storages.set(tenant, storage);
    }
    return storage;
  };
  const sourceOf = (agentId: string) => deps.agents.graph(agentId)?.graph;
  return {
    storageOf,
    requireSource(agentId) {
      const source = sourceOf(agentId);
      if (!source) throw new AppError('unknown_agent', `Agent "${agentId}" is not registered.`);
      return source;
    },
    async graphFor(source, tenant, config) {
      const graph = (await source.load(config)) as AnyGraph;
      return withTenantStorage(graph, storageOf(tenant));
    },
    recursionLimitOf: (graph, asked = Infinity) => Math.min(asked, (graph.config?.recursionLimit as number | undefined) ?? deps.stepLimit),
  };
}
