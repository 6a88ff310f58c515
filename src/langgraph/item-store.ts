import { isDeepStrictEqual } from 'node:util';
import {
  BaseStore,
  validateNamespace,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type MatchCondition,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
} from '@langchain/langgraph-checkpoint';
import type { GraphItem, GraphItemStore } from '../ports/graph-storage.js';
import { badRequest } from '../domain/errors.js';

export interface AgentplaneStoreOptions {
  /** The tenant every read and write is scoped to. */
  tenant: string;
  /** The backend's memory item storage (memory or Redis adapter). */
  storage: GraphItemStore;
}

/** Items or namespaces read per storage call while searching or listing. */
const SCAN_PAGE = 200;

type FilterOperators = Partial<Record<'$eq' | '$ne' | '$gt' | '$gte' | '$lt' | '$lte' | '$in' | '$nin', unknown>>;
const OPERATORS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin']);

const isOperators = (filter: unknown): filter is FilterOperators =>
  typeof filter === 'object' && filter !== null && !Array.isArray(filter) && Object.keys(filter).length > 0 && Object.keys(filter).every((k) => OPERATORS.has(k));

/** LangGraph's filter rule for one field: equality, or every operator of an operator object. */
function matches(value: unknown, filter: unknown): boolean {
  if (!isOperators(filter)) return isDeepStrictEqual(value, filter);
  return Object.entries(filter).every(([op, operand]) => {
    switch (op) {
      case '$eq':
        return isDeepStrictEqual(value, operand);
      case '$ne':
        return !isDeepStrictEqual(value, operand);
      case '$gt':
        return Number(value) > Number(operand);
      case '$gte':
        return Number(value) >= Number(operand);
      case '$lt':
        return Number(value) < Number(operand);
      case '$lte':
        return Number(value) <= Number(operand);
      case '$in':
        return Array.isArray(operand) && operand.some((o) => isDeepStrictEqual(value, o));
      default:
        return !Array.isArray(operand) || !operand.some((o) => isDeepStrictEqual(value, o));
    }
  });
}

/** Whether a namespace satisfies a prefix or suffix condition (`*` matches any one label). */
function satisfies(condition: MatchCondition, namespace: string[]): boolean {
  const { path } = condition;
  if (path.length > namespace.length) return false;
  const start = condition.matchType === 'prefix' ? 0 : namespace.length - path.length;
  return path.every((label, i) => label === '*' || namespace[start + i] === label);
}

const toItem = (item: GraphItem): Item => ({
  namespace: item.namespace,
  key: item.key,
  value: JSON.parse(item.value) as Record<string, unknown>,
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
    return item ? toItem(item) : null;
  }

  /** Items under the prefix matching the filter, by namespace then key, one page. */
  private async searchItems(op: SearchOperation): Promise<SearchItem[]> {
    validateNamespace(op.namespacePrefix, { allowEmpty: true, allowReservedRoot: true });
    const offset = op.offset ?? 0;
    const limit = op.limit ?? 10;
    const found: SearchItem[] = [];
    let skipped = 0;
    let cursor: string | undefined;
    do {
      const page = await this.storage.scanItems(this.tenant, op.namespacePrefix, cursor, SCAN_PAGE);
      for (const stored of page.items) {
        const item = toItem(stored);
        if (op.filter && !Object.entries(op.filter).every(([field, filter]) => matches(item.value[field], filter))) continue;
        if (skipped < offset) skipped += 1;
        else found.push(item);
        if (found.length >= limit) return found;
      }
      cursor = page.next;
    } while (cursor !== undefined);
    return found;
  }

  /** Distinct namespaces meeting every condition, cut to `maxDepth`, in order, one page. */
  private async namespaces(op: ListNamespacesOperation): Promise<string[][]> {
    const conditions = op.matchConditions ?? [];
    const prefixPath = conditions.find((c) => c.matchType === 'prefix')?.path ?? [];
    const literal = prefixPath.slice(0, prefixPath.includes('*') ? prefixPath.indexOf('*') : undefined);
    const seen = new Set<string>();
    const found: string[][] = [];
    let cursor: string | undefined;
    do {
      const page = await this.storage.scanNamespaces(this.tenant, literal, cursor, SCAN_PAGE);
      for (const namespace of page.namespaces) {
        if (!conditions.every((c) => satisfies(c, namespace))) continue;
        const cut = op.maxDepth === undefined ? namespace : namespace.slice(0, op.maxDepth);
        const name = JSON.stringify(cut);
        if (seen.has(name)) continue;
        seen.add(name);
        found.push(cut);
        if (found.length >= op.offset + op.limit) return found.slice(op.offset);
      }
      cursor = page.next;
    } while (cursor !== undefined);
    return found.slice(op.offset);
  }
}
