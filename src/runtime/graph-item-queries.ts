import { isDeepStrictEqual } from 'node:util';
import type { GraphItem, GraphItemStore } from '../ports/graph-storage.js';

/**
 * The queries of LangGraph's cross-thread memory over the {@link GraphItemStore} port, shared
 * by the `BaseStore` graphs use (src/langgraph/item-store.ts) and the `/store/*` routes: the
 * same filter rule, namespace conditions, pages and namespace rules for both.
 */

/** A stored item with its value parsed. */
export interface ParsedGraphItem extends Omit<GraphItem, 'value'> {
  value: Record<string, unknown>;
}

/** A namespace condition of a namespace listing: `*` matches any one label. */
export interface NamespaceCondition {
  matchType: 'prefix' | 'suffix';
  path: readonly string[];
}

export interface GraphItemSearch {
  /** Items whose namespace starts with these labels (`[]`: every item). */
  prefix: string[];
  /** Per value field: a value it must equal, or an object of operators (`$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte`, `$in`, `$nin`). */
  filter?: Record<string, unknown>;
  offset: number;
  limit: number;
}

export interface GraphNamespaceListing {
  conditions: readonly NamespaceCondition[];
  /** Namespaces cut to this many labels (duplicates then listed once). */
  maxDepth?: number;
  offset: number;
  limit: number;
}

/** Items or namespaces read per storage call while searching or listing. */
const SCAN_PAGE = 200;

type FilterOperators = Partial<Record<'$eq' | '$ne' | '$gt' | '$gte' | '$lt' | '$lte' | '$in' | '$nin', unknown>>;
const OPERATORS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin']);

const isOperators = (filter: unknown): filter is FilterOperators =>
  typeof filter === 'object' && filter !== null && !Array.isArray(filter) && Object.keys(filter).length > 0 && Object.keys(filter).every((k) => OPERATORS.has(k));

/** LangGraph's filter rule for one field: equality, or every operator of an operator object. */
function fieldMatches(value: unknown, filter: unknown): boolean {
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

/** Whether an item's value meets every field of a search filter (no filter: every value does). */
export function matchesFilter(value: Record<string, unknown>, filter: Record<string, unknown> | undefined): boolean {
  return !filter || Object.entries(filter).every(([field, condition]) => fieldMatches(value[field], condition));
}

/** Whether a namespace meets a prefix or suffix condition. */
export function meetsCondition(condition: NamespaceCondition, namespace: readonly string[]): boolean {
  const { path } = condition;
  if (path.length > namespace.length) return false;
  const start = condition.matchType === 'prefix' ? 0 : namespace.length - path.length;
  return path.every((label, i) => label === '*' || namespace[start + i] === label);
}

/**
 * Most UTF-8 bytes of an item's namespace (its labels joined with `.`) and key together, as a
 * PUT /store/items takes them: GET /store/items carries both in its URL, which Node reads
 * within 16 KiB of request line and headers; percent-encoded (3 bytes per byte at worst) they
 * take at most 12 KiB of it, the rest left to the headers (a credential, a JWT).
 */
export const MAX_STORE_ITEM_KEY_BYTES = 4096;

/**
 * Why a namespace breaks LangGraph's rules (`validateNamespace`), or undefined when it keeps
 * them: labels non-empty, without `.`, `:` or NUL (the storage joins labels with `.`); not
 * empty unless `allowEmpty`; not under the root `langgraph` (reserved) unless `allowReservedRoot`.
 */
export function namespaceProblem(namespace: readonly string[], options: { allowEmpty?: boolean; allowReservedRoot?: boolean } = {}): string | undefined {
  if (namespace.length === 0) return options.allowEmpty ? undefined : 'a namespace needs at least one label';
  const bad = namespace.find((label) => label === '' || /[.:\0]/.test(label));
  if (bad !== undefined) return `namespace label ${JSON.stringify(bad)} is empty or holds ".", ":" or NUL`;
  if (namespace[0] === 'langgraph' && !options.allowReservedRoot) return 'the namespace root "langgraph" is reserved';
  return undefined;
}

/** A stored item with its value's JSON parsed. */
export const parseGraphItem = (item: GraphItem): ParsedGraphItem => ({ ...item, value: JSON.parse(item.value) as Record<string, unknown> });

/** Items under the prefix whose value meets the filter, in the storage's order (namespace, then the order put): one page of `limit` after `offset`. */
export async function searchGraphItems(storage: GraphItemStore, tenant: string, search: GraphItemSearch): Promise<ParsedGraphItem[]> {
  const found: ParsedGraphItem[] = [];
  let skipped = 0;
  let cursor: string | undefined;
  do {
    const page = await storage.scanItems(tenant, search.prefix, cursor, SCAN_PAGE);
    for (const stored of page.items) {
      const item = parseGraphItem(stored);
      if (!matchesFilter(item.value, search.filter)) continue;
      if (skipped < search.offset) skipped += 1;
      else found.push(item);
      if (found.length >= search.limit) return found;
    }
    cursor = page.next;
  } while (cursor !== undefined);
  return found;
}

/** Distinct namespaces meeting every condition, cut to `maxDepth`, in order: one page of `limit` after `offset`. */
export async function listGraphNamespaces(storage: GraphItemStore, tenant: string, listing: GraphNamespaceListing): Promise<string[][]> {
  const prefixPath = listing.conditions.find((c) => c.matchType === 'prefix')?.path ?? [];
  const literal = prefixPath.slice(0, prefixPath.includes('*') ? prefixPath.indexOf('*') : undefined);
  const seen = new Set<string>();
  const found: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = await storage.scanNamespaces(tenant, literal, cursor, SCAN_PAGE);
    for (const namespace of page.namespaces) {
      if (!listing.conditions.every((c) => meetsCondition(c, namespace))) continue;
      const cut = listing.maxDepth === undefined ? namespace : namespace.slice(0, listing.maxDepth);
      const name = JSON.stringify(cut);
      if (seen.has(name)) continue;
      seen.add(name);
      found.push(cut);
      if (found.length >= listing.offset + listing.limit) return found.slice(listing.offset);
    }
    cursor = page.next;
  } while (cursor !== undefined);
  return found.slice(listing.offset);
}
