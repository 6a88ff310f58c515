import type { Pregel } from '@langchain/langgraph';
import type { BaseStore } from '@langchain/langgraph-checkpoint';
import type { GraphCheckpointStore, GraphItemStore } from '../ports/graph-storage.js';
import { AgentplaneCheckpointSaver } from './checkpoint-saver.js';
import { AgentplaneStore } from './item-store.js';
import { StoredCheckpoints } from './stored-checkpoints.js';
import { ThreadCheckpoints } from './thread-checkpoints.js';

/** What a tenant's graphs keep their state in: our checkpointer and our store; and the engine's own reads of the checkpoints. */
export interface TenantGraphStorage {
  /** LangGraph's saver: what a graph reads and writes its checkpoints through. */
  checkpointer: AgentplaneCheckpointSaver;
  /** The same checkpoints as the engine and the thread operations read, copy and roll back. */
  checkpoints: ThreadCheckpoints;
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
  const stored = new StoredCheckpoints({
    tenant,
    storage: options.checkpoints,
    retain: options.retain,
    maxCheckpointBytes: options.maxCheckpointBytes,
    requireSession: options.requireSession ?? true,
    runMetadata: true,
  });
  const checkpointer = new AgentplaneCheckpointSaver(stored);
  return {
    checkpointer,
    checkpoints: new ThreadCheckpoints(stored, checkpointer),
    store: new AgentplaneStore({ tenant, storage: options.items }),
  };
}

/**
 * A copy of a compiled graph that keeps its checkpoints in our checkpointer and gives its nodes
 * our store (`config.store`, `getStore()`, `runtime.store`), whatever it was compiled with: a
 * graph a project compiled with `MemorySaver` (to try it alone) runs on agentplane's storage
 * unchanged. The graph itself is left as it was.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any compiled graph, whatever its nodes and channels
export function withTenantStorage<G extends Pregel<any, any>>(graph: G, storage: TenantGraphStorage): G {
  const copy = graph.withConfig({});
  copy.checkpointer = storage.checkpointer;
  copy.store = storage.store;
  storeToTasks(copy, storage.store);
  return copy;
}

/** Where `Pregel._defaults` answers a run's config and its store (LangGraph 1.x). */
const CONFIG_AT = 4;
const STORE_AT = 8;
type Defaults = (this: unknown, config: Record<string, unknown>) => unknown[];

/**
 * Hands `store` to a run's tasks as it is. LangGraph wraps the store a run is given in an
 * `AsyncBatchedStore`, whose queue it polls with `setTimeout(0)` for as long as the run lasts
 * (a timer a millisecond per run, whether or not a node touches the store: a third of a short
 * run's CPU here; LangGraph for Python dropped that busy loop). Our store answers one operation
 * as cheaply as a batch of them, so the copy's defaults put it in the run's config, whence
 * every task's `config.store` comes, instead of handing it to the loop that wraps it. A
 * LangGraph whose defaults read otherwise (another version a graph brings) wraps it as before.
 */
function storeToTasks(copy: object, store: BaseStore): void {
  const own = (copy as { _defaults?: Defaults })._defaults;
  if (typeof own !== 'function') return;
  (copy as { _defaults: Defaults })._defaults = function (config) {
    const defaults = own.call(this, config);
    const runConfig = defaults[CONFIG_AT];
    if (defaults[STORE_AT] === store && typeof runConfig === 'object' && runConfig !== null) {
      defaults[CONFIG_AT] = { ...runConfig, store };
      defaults[STORE_AT] = undefined;
    }
    return defaults;
  };
}
