import {
  BaseStore,
  validateNamespace,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
} from '@langchain/langgraph-checkpoint';
import type { GraphItemStore } from '../ports/graph-storage.js';
import { badRequest } from '../domain/errors.js';
import { listGraphNamespaces, parseGraphItem, searchGraphItems, type ParsedGraphItem } from '../runtime/graph-item-queries.js';

export interface AgentplaneStoreOptions {
  /** The tenant every read and write is scoped to. */
  tenant: string;
  /** The backend's memory item storage (memory or Redis adapter). */
  storage: GraphItemStore;
}

const toItem = (item: ParsedGraphItem): Item => ({
  namespace: item.namespace,
  key: item.key,
  value: item.value,
  createdAt: new Date(item.createdAt),
  updatedAt: new Date(item.updatedAt),
});

/**
 * LangGraph's `BaseStore` (cross-thread memory, what graphs get as `config.store`) on
 * agentplane's storage, for one tenant: items by namespace and key, search by namespace prefix
 * and filter, namespace listing; values are JSON. No vector index: a search's `query` and a
 * put's `index` are ignored, as by LangGraph's InMemoryStore without embeddings. A batch
 * answers its reads before it applies its writes, in order. Bounded by the storage's byte cap
 * per tenant: a put past it fails with AppError `payload_too_large` (413).
 */
export class AgentplaneStore extends BaseStore {
  readonly tenant: string;
  private readonly storage: GraphItemStore;

  constructor(options: AgentplaneStoreOptions) {
    super();
    this.tenant = options.tenant;
    this.storage = options.storage;
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    const writes: PutOperation[] = [];
    for (const op of operations) {
      if ('value' in op) {
        validateNamespace(op.namespace);
        if (op.value !== null && (typeof op.value !== 'object' || Array.isArray(op.value))) throw badRequest('A store item value must be an object.');
        writes.push(op);
        results.push(undefined);
      } else if ('namespacePrefix' in op) {
        results.push(await this.searchItems(op));
      } else if ('key' in op) {
        results.push(await this.getItem(op));
      } else {
        results.push(await this.namespaces(op));
      }
    }
    for (const op of writes) {
      if (op.value === null) await this.storage.deleteItem(this.tenant, op.namespace, op.key);
      else await this.storage.putItem(this.tenant, op.namespace, op.key, JSON.stringify(op.value));
    }
    return results as OperationResults<Op>;
  }

  private async getItem(op: GetOperation): Promise<Item | null> {
    validateNamespace(op.namespace, { allowReservedRoot: true });
    const item = await this.storage.getItem(this.tenant, op.namespace, op.key);
    return item ? toItem(parseGraphItem(item)) : null;
  }

  /** Items under the prefix matching the filter, by namespace, then in the order put, one page. */
  private async searchItems(op: SearchOperation): Promise<SearchItem[]> {
    validateNamespace(op.namespacePrefix, { allowEmpty: true, allowReservedRoot: true });
    const found = await searchGraphItems(this.storage, this.tenant, { prefix: op.namespacePrefix, filter: op.filter, offset: op.offset ?? 0, limit: op.limit ?? 10 });
    return found.map(toItem);
  }

  /** Distinct namespaces meeting every condition, cut to `maxDepth`, in order, one page. */
  private async namespaces(op: ListNamespacesOperation): Promise<string[][]> {
    return listGraphNamespaces(this.storage, this.tenant, { conditions: op.matchConditions ?? [], maxDepth: op.maxDepth, offset: op.offset, limit: op.limit });
  }
}
