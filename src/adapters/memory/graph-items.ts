import type { GraphItem, GraphItemPage, GraphItemStore, GraphNamespacePage } from '../../ports/graph-storage.js';
import { itemCursor, itemMember, namespaceLabels, namespaceName, prefixRange, splitItemCursor, splitItemMember } from '../shared/graph-members.js';
import { graphItemBytes, graphItemRecord, graphItemsTooLarge, parseGraphItemRecord } from '../shared/graph-limits.js';
import { DEFAULT_GRAPH_ITEMS_MAX_BYTES } from '../../domain/types.js';

export interface MemoryGraphItemStoreOptions {
  /** Bytes of items one tenant may hold. @defaultValue DEFAULT_GRAPH_ITEMS_MAX_BYTES */
  maxTenantBytes?: number;
  /** @defaultValue Date.now */
  clock?: () => number;
}

interface Tenant {
  /** Records by member (`namespace NUL key`), as the Redis adapter stores them. */
  items: Map<string, string>;
  /** Each item's place: the order it was put in, kept when it is replaced. */
  places: Map<string, number>;
  lastPlace: number;
  bytes: number;
}

/** Sorted members of `names` in the range of a namespace prefix, after `cursor`. */
function page(names: Iterable<string>, prefix: string, cursor: string | undefined, limit: number): { members: string[]; next?: string } {
  const { min, max } = prefixRange(prefix);
  const members = [...names].filter((m) => m >= min && (max === undefined || m < max) && (cursor === undefined || m > cursor)).sort();
  const taken = members.slice(0, limit);
  return members.length > limit ? { members: taken, next: taken.at(-1)! } : { members: taken };
}

/** LangGraph memory items in memory (the embedded mode), with the Redis adapter's byte accounting. */
export class MemoryGraphItemStore implements GraphItemStore {
  private readonly tenants = new Map<string, Tenant>();
  private readonly maxTenantBytes: number;
  private readonly clock: () => number;

  constructor(options: MemoryGraphItemStoreOptions = {}) {
    this.maxTenantBytes = options.maxTenantBytes ?? DEFAULT_GRAPH_ITEMS_MAX_BYTES;
    this.clock = options.clock ?? Date.now;
  }

  private tenant(tenant: string): Tenant {
    let t = this.tenants.get(tenant);
    if (!t) this.tenants.set(tenant, (t = { items: new Map(), places: new Map(), lastPlace: 0, bytes: 0 }));
    return t;
  }

  async putItem(tenant: string, namespace: string[], key: string, value: string): Promise<void> {
    const t = this.tenant(tenant);
    const member = itemMember(namespace, key);
    const old = t.items.get(member);
    const now = this.clock();
    const record = graphItemRecord(old === undefined ? now : parseGraphItemRecord(old).createdAt, now, value);
    const grows = graphItemBytes(member, record) - (old === undefined ? 0 : graphItemBytes(member, old));
    if (grows > 0 && t.bytes + grows > this.maxTenantBytes) throw graphItemsTooLarge(this.maxTenantBytes);
    t.items.set(member, record);
    if (old === undefined) t.places.set(member, (t.lastPlace += 1));
    t.bytes += grows;
  }

  async getItem(tenant: string, namespace: string[], key: string): Promise<GraphItem | null> {
    const record = this.tenants.get(tenant)?.items.get(itemMember(namespace, key));
    return record === undefined ? null : { namespace: [...namespace], key, ...parseGraphItemRecord(record) };
  }

  async deleteItem(tenant: string, namespace: string[], key: string): Promise<void> {
    const t = this.tenants.get(tenant);
    const member = itemMember(namespace, key);
    const old = t?.items.get(member);
    if (!t || old === undefined) return;
    t.items.delete(member);
    t.places.delete(member);
    t.bytes -= graphItemBytes(member, old);
  }

  async scanItems(tenant: string, prefix: string[], cursor: string | undefined, limit: number): Promise<GraphItemPage> {
    const t = this.tenants.get(tenant);
    if (!t) return { items: [] };
    const { min, max } = prefixRange(namespaceName(prefix));
    const from = cursor === undefined ? undefined : splitItemCursor(cursor);
    const members = [...t.items.keys()]
      .map((member) => ({ member, namespace: member.slice(0, member.indexOf('\u0000')), place: t.places.get(member)! }))
      .filter(({ namespace: ns, place }) => ns >= min && (max === undefined || ns < max) && (!from || ns > from.namespace || (ns === from.namespace && place > from.place)))
      .sort((a, b) => (a.namespace === b.namespace ? a.place - b.place : a.namespace < b.namespace ? -1 : 1));
    const taken = members.slice(0, limit);
    const items = taken.map(({ member }) => ({ ...splitItemMember(member), ...parseGraphItemRecord(t.items.get(member)!) }));
    const last = taken.at(-1);
    return members.length > limit && last ? { items, next: itemCursor(last.namespace, last.place) } : { items };
  }

  async scanNamespaces(tenant: string, prefix: string[], cursor: string | undefined, limit: number): Promise<GraphNamespacePage> {
    const names = new Set([...(this.tenants.get(tenant)?.items.keys() ?? [])].map((m) => m.slice(0, m.indexOf('\u0000'))));
    const { members, next } = page(names, namespaceName(prefix), cursor, limit);
    const namespaces = members.map(namespaceLabels);
    return next === undefined ? { namespaces } : { namespaces, next };
  }

  async usedBytes(tenant: string): Promise<number> {
    return this.tenants.get(tenant)?.bytes ?? 0;
  }
}
