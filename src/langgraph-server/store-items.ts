import { badRequest } from '../domain/errors.js';
import type { JsonObject } from '../domain/types.js';
import {
  listGraphNamespaces,
  MAX_STORE_ITEM_KEY_BYTES,
  namespaceProblem,
  parseGraphItem,
  searchGraphItems,
  type NamespaceCondition,
  type ParsedGraphItem,
} from '../runtime/graph-item-queries.js';
import type { LangGraphDeps } from './deps.js';

/**
 * The store of the LangGraph Server API: the tenant's cross-thread memory, the items graphs
 * read and write through `config.store` (the backend's GraphItemStore, capped per tenant).
 * No vector index: a search's `query` and a put's `index` are ignored, as by LangGraph's
 * InMemoryStore without embeddings. Items do not expire. A namespace LangGraph's rules refuse
 * is a 400 naming the field it came in (`field`).
 */

type ItemDeps = Pick<LangGraphDeps, 'graphItems'>;

/** An item as LangGraph's server answers it. */
export interface StoreItem {
  namespace: string[];
  key: string;
  value: JsonObject;
  created_at: string;
  updated_at: string;
}

const toWire = (item: ParsedGraphItem): StoreItem => ({
  namespace: item.namespace,
  key: item.key,
  value: item.value,
  created_at: new Date(item.createdAt).toISOString(),
  updated_at: new Date(item.updatedAt).toISOString(),
});

/** The namespace as LangGraph's rules allow it for this use, else a 400 naming the field. */
function checked(field: string, namespace: string[], options: Parameters<typeof namespaceProblem>[1]): string[] {
  const problem = namespaceProblem(namespace, options);
  if (problem) throw badRequest(`${field}: ${problem}`);
  return namespace;
}

/** A namespace given as a body's field, or as a query's labels joined with `.`. */
export interface GivenNamespace {
  field: string;
  namespace: string[];
}

/** Stores or replaces an item (not under the reserved root). */
export async function putStoreItem(deps: ItemDeps, tenant: string, at: GivenNamespace, key: string, value: JsonObject): Promise<void> {
  const namespace = checked(at.field, at.namespace, {});
  // GET /store/items carries the namespace and key in its URL: refuse what it could not read back.
  const keyBytes = Buffer.byteLength(namespace.join('.')) + Buffer.byteLength(key);
  if (keyBytes > MAX_STORE_ITEM_KEY_BYTES) {
    throw badRequest(
      `body.key: the namespace (labels joined with ".") and key take ${keyBytes} bytes, more than the limit of ${MAX_STORE_ITEM_KEY_BYTES} bytes that GET /store/items can carry in its URL.`,
    );
  }
  await deps.graphItems.putItem(tenant, namespace, key, JSON.stringify(value));
}

/** One item, or null. */
export async function getStoreItem(deps: ItemDeps, tenant: string, at: GivenNamespace, key: string): Promise<StoreItem | null> {
  const namespace = at.namespace.length > 0 ? checked(at.field, at.namespace, { allowReservedRoot: true }) : [];
  const found = await deps.graphItems.getItem(tenant, namespace, key);
  return found ? toWire(parseGraphItem(found)) : null;
}

/** Deletes an item (nothing when there is none). */
export async function deleteStoreItem(deps: ItemDeps, tenant: string, at: GivenNamespace, key: string): Promise<void> {
  await deps.graphItems.deleteItem(tenant, checked(at.field, at.namespace, { allowReservedRoot: true }), key);
}

/** Items under a namespace prefix whose value matches `filter`, by namespace, then in the order put. */
export async function searchStoreItems(
  deps: ItemDeps,
  tenant: string,
  search: { prefix: GivenNamespace; filter?: JsonObject | undefined; offset: number; limit: number },
): Promise<StoreItem[]> {
  const prefix = checked(search.prefix.field, search.prefix.namespace, { allowEmpty: true, allowReservedRoot: true });
  const found = await searchGraphItems(deps.graphItems, tenant, { prefix, filter: search.filter, offset: search.offset, limit: search.limit });
  return found.map(toWire);
}

/** The namespaces holding items, in order: starting with `prefix`, ending with `suffix`, cut to `maxDepth` labels. */
export async function listStoreNamespaces(
  deps: ItemDeps,
  tenant: string,
  list: { prefix?: GivenNamespace | undefined; suffix?: GivenNamespace | undefined; maxDepth?: number | undefined; offset: number; limit: number },
): Promise<string[][]> {
  const conditions: NamespaceCondition[] = [];
  if (list.prefix?.namespace.length) conditions.push({ matchType: 'prefix', path: checked(list.prefix.field, list.prefix.namespace, { allowReservedRoot: true }) });
  if (list.suffix?.namespace.length) conditions.push({ matchType: 'suffix', path: checked(list.suffix.field, list.suffix.namespace, { allowReservedRoot: true }) });
  return listGraphNamespaces(deps.graphItems, tenant, { conditions, maxDepth: list.maxDepth, offset: list.offset, limit: list.limit });
}
