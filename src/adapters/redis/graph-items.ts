import type { GraphItem, GraphItemPage, GraphItemStore, GraphNamespacePage } from '../../ports/graph-storage.js';
import type { RedisClient } from './connection.js';
import { redisContext, type RedisContext } from './context.js';
import { mapFailures } from './errors.js';
import { itemCursor, itemMember, namespaceLabels, namespaceName, prefixRange, splitItemCursor } from '../shared/graph-members.js';
import { graphItemsTooLarge, parseGraphItemRecord } from '../shared/graph-limits.js';
import { DEFAULT_GRAPH_ITEMS_MAX_BYTES } from '../../domain/types.js';

export interface RedisGraphItemStoreOptions {
  /** Prefix of every key. @defaultValue agentplane */
  keyPrefix?: string;
  /** Bytes of items one tenant may hold. @defaultValue DEFAULT_GRAPH_ITEMS_MAX_BYTES */
  maxTenantBytes?: number;
  /** @defaultValue Date.now */
  clock?: () => number;
}

/** ZRANGEBYLEX bounds of a namespace prefix's members after `cursor`. */
function bounds(prefix: string, cursor: string | undefined): [string, string] {
  const { min, max } = prefixRange(prefix);
  return [cursor !== undefined ? `(${cursor}` : min === '' ? '-' : `[${min}`, max === undefined ? '+' : `(${max}`];
}

/**
 * LangGraph memory items on Redis under the tenant's hash tag: a hash of records, a lexical
 * sorted set of namespaces for prefix scans, per namespace a sorted set of its keys by place
 * (the order they were put in), and a byte counter the write script checks, so the cap holds
 * across replicas.
 */
class RedisGraphItems implements GraphItemStore {
  constructor(
    private readonly context: RedisContext,
    private readonly maxTenantBytes: number,
    private readonly clock: () => number,
  ) {}

  private keys(tenant: string, namespace: string): string[] {
    const k = this.context.keys.graphMemory(tenant);
    return [k.items, k.itemOrder(namespace), k.namespaces, k.namespaceCounts, k.bytes];
  }

  async putItem(tenant: string, namespace: string[], key: string, value: string): Promise<void> {
    const name = namespaceName(namespace);
    const args = [itemMember(namespace, key), name, value, this.clock(), this.maxTenantBytes, key];
    const [tooLarge] = await this.context.script<[number]>('putGraphItem', this.keys(tenant, name), args);
    if (tooLarge) throw graphItemsTooLarge(this.maxTenantBytes);
  }

  async getItem(tenant: string, namespace: string[], key: string): Promise<GraphItem | null> {
    const record = await this.context.redis.hget(this.context.keys.graphMemory(tenant).items, itemMember(namespace, key));
    return record === null ? null : { namespace: [...namespace], key, ...parseGraphItemRecord(record) };
  }

  async deleteItem(tenant: string, namespace: string[], key: string): Promise<void> {
    const name = namespaceName(namespace);
    await this.context.script('deleteGraphItem', this.keys(tenant, name), [itemMember(namespace, key), name, key]);
  }

  async scanItems(tenant: string, prefix: string[], cursor: string | undefined, limit: number): Promise<GraphItemPage> {
    const k = this.context.keys.graphMemory(tenant);
    const from = cursor === undefined ? { namespace: '', place: 0 } : splitItemCursor(cursor);
    const args = [k.itemOrderPrefix, ...bounds(namespaceName(prefix), undefined), from.namespace, from.place, limit];
    const [, ...flat] = await this.context.script<[0, ...string[]]>('scanGraphItems', [k.items, k.namespaces], args);
    const items: GraphItem[] = [];
    for (let i = 0; i < flat.length; i += 4) items.push({ namespace: namespaceLabels(flat[i]!), key: flat[i + 1]!, ...parseGraphItemRecord(flat[i + 3]!) });
    return items.length === limit ? { items, next: itemCursor(flat.at(-4)!, flat.at(-2)!) } : { items };
  }

  async scanNamespaces(tenant: string, prefix: string[], cursor: string | undefined, limit: number): Promise<GraphNamespacePage> {
    const names = await this.context.redis.zrangebylex(this.context.keys.graphMemory(tenant).namespaces, ...bounds(namespaceName(prefix), cursor), 'LIMIT', 0, limit);
    const namespaces = names.map(namespaceLabels);
    return names.length === limit ? { namespaces, next: names.at(-1)! } : { namespaces };
  }

  async usedBytes(tenant: string): Promise<number> {
    return Number((await this.context.redis.get(this.context.keys.graphMemory(tenant).bytes)) ?? 0);
  }
}

/** The LangGraph memory item storage on Redis; answers AppError `unavailable` while Redis is unreachable. */
export function redisGraphItemStore(redis: RedisClient, options: RedisGraphItemStoreOptions = {}): GraphItemStore {
  const context = redisContext(redis, options.keyPrefix ?? 'agentplane');
  return mapFailures(new RedisGraphItems(context, options.maxTenantBytes ?? DEFAULT_GRAPH_ITEMS_MAX_BYTES, options.clock ?? Date.now));
}
