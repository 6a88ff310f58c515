import type { Pregel } from '@langchain/langgraph';
import type { GraphCheckpointStore, GraphItemStore } from '../ports/graph-storage.js';
import { AgentplaneCheckpointSaver } from './checkpoint-saver.js';
import { AgentplaneStore } from './item-store.js';

/** What a tenant's graphs keep their state in: our checkpointer and our store. */
export interface TenantGraphStorage {
  checkpointer: AgentplaneCheckpointSaver;
  store: AgentplaneStore;
}

export interface TenantGraphStorageOptions {
  tenant: string;
  checkpoints: GraphCheckpointStore;
  items: GraphItemStore;
  /** Checkpoints kept per thread and namespace (SERVICE_CHECKPOINTS_RETAIN). @defaultValue DEFAULT_STORAGE_LIMITS.checkpointsRetain */
  retain?: number;
  /** Largest checkpoint a put stores (SERVICE_MAX_STATE_BYTES). @defaultValue DEFAULT_STORAGE_LIMITS.maxStateBytes */
  maxCheckpointBytes?: number;
  /** Refuse writes for a thread whose session is gone (the engine's runs and thread operations). @defaultValue true */
  requireSession?: boolean;
}

/** The checkpointer and the store of one tenant on the backend's LangGraph storage. */
export function tenantGraphStorage(options: TenantGraphStorageOptions): TenantGraphStorage {
  const { tenant } = options;
  return {
    checkpointer: new AgentplaneCheckpointSaver({
      tenant,
      storage: options.checkpoints,
      retain: options.retain,
      maxCheckpointBytes: options.maxCheckpointBytes,
      requireSession: options.requireSession ?? true,
      runMetadata: true,
    }),
    store: new AgentplaneStore({ tenant, storage: options.items }),
  };
}

/**
 * A copy of a compiled graph that keeps its checkpoints in our checkpointer and gives its nodes
 * our store (`config.store`, `getStore()`), whatever it was compiled with: a graph a project
 * compiled with `MemorySaver` (to try it alone) runs on agentplane's storage unchanged. The
 * graph itself is left as it was.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any compiled graph, whatever its nodes and channels
export function withTenantStorage<G extends Pregel<any, any>>(graph: G, storage: TenantGraphStorage): G {
  const copy = graph.withConfig({});
  copy.checkpointer = storage.checkpointer;
  copy.store = storage.store;
  return copy;
}
