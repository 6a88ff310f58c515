import { z } from 'zod';
import { badRequest } from '../../domain/errors.js';
import {
  listGraphNamespaces,
  MAX_STORE_ITEM_KEY_BYTES,
  namespaceProblem,
  parseGraphItem,
  searchGraphItems,
  type NamespaceCondition,
  type ParsedGraphItem,
} from '../../runtime/graph-item-queries.js';
import type { AppDeps } from '../deps.js';
import type { AnyRoute } from '../route.js';
import { JsonObjectSchema, Timestamp } from '../schemas.js';
import { defineLangGraphRoute, langgraphErrors } from './langgraph-route.js';

/**
 * The store of the LangGraph Server API: the tenant's cross-thread memory, the items graphs
 * read and write through `config.store` (the backend's GraphItemStore, capped per tenant).
 * No vector index: a search's `query` and a put's `index` are ignored, as by LangGraph's
 * InMemoryStore without embeddings. Items do not expire: a `ttl` is refused.
 */

const Labels = z.array(z.string());

export const StoreItemSchema = z
  .object({
    namespace: z.array(z.string()),
    key: z.string(),
    value: JsonObjectSchema,
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'StoreItem' });

const toWire = (item: ParsedGraphItem) => ({
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

const ItemKey = z.object({ namespace: Labels, key: z.string() });

/** PUT, GET and DELETE /store/items, POST /store/items/search and /store/namespaces, scoped to the caller's tenant. */
export function langgraphStoreRoutes(deps: Pick<AppDeps, 'graphItems'>): AnyRoute[] {
  const items = deps.graphItems;
  const reads = langgraphErrors(400, 401, 403, 429);
  const bodies = langgraphErrors(413, 415);
  return [
    defineLangGraphRoute({
      method: 'PUT',
      path: '/store/items',
      operationId: 'putStoreItem',
      summary: 'Store or replace an item',
      body: z.strictObject({
        ...ItemKey.shape,
        value: JsonObjectSchema,
        index: z.union([z.literal(false), z.array(z.string())]).nullable().optional().meta({ description: 'ignored: no vector index' }),
        ttl: z.null({ error: 'items do not expire: send no ttl, or null' }).optional().meta({ description: 'items do not expire: only null is accepted' }),
      }),
      bodyExamples: { put: { summary: 'a preference of a user', value: { namespace: ['users', 'ana'], key: 'prefs', value: { theme: 'dark' } } } },
      responses: {
        204: { description: 'Stored' },
        ...reads,
        ...langgraphErrors('payload_too_large', 415),
      },
      handler: async ({ body, principal }) => {
        const namespace = checked('body.namespace', body.namespace, {});
        const keyBytes = Buffer.byteLength(namespace.join('.')) + Buffer.byteLength(body.key);
        if (keyBytes > MAX_STORE_ITEM_KEY_BYTES) {
          throw badRequest(
            `body.key: the namespace (labels joined with ".") and key take ${keyBytes} bytes, more than the limit of ${MAX_STORE_ITEM_KEY_BYTES} bytes that GET /store/items can carry in its URL.`,
          );
        }
        await items.putItem(principal.tenant, namespace, body.key, JSON.stringify(body.value));
        return { status: 204, body: undefined };
      },
    }),
    defineLangGraphRoute({
      method: 'GET',
      path: '/store/items',
      operationId: 'getStoreItem',
      summary: 'One item, or null',
      query: z.object({
        namespace: z.string().optional().meta({ description: 'the labels joined with "." (none: the empty namespace)' }),
        key: z.string(),
        refresh_ttl: z.enum(['true', 'false']).optional().meta({ description: 'ignored: items do not expire' }),
      }),
      responses: { 200: { description: 'The item; null when there is none', schema: StoreItemSchema.nullable() }, ...reads },
      handler: async ({ query, principal, ctx }) => {
        const namespace = query.namespace ? checked('query.namespace', query.namespace.split('.'), { allowReservedRoot: true }) : [];
        const found = await items.getItem(principal.tenant, namespace, query.key);
        ctx.status = 200;
        // A null body would otherwise turn into 204: JSON null is LangGraph's answer for none.
        ctx.type = 'application/json';
        ctx.body = found ? toWire(parseGraphItem(found)) : null;
        return 'handled';
      },
    }),
    defineLangGraphRoute({
      method: 'DELETE',
      path: '/store/items',
      operationId: 'deleteStoreItem',
      summary: 'Delete an item (nothing when there is none)',
      body: z.strictObject(ItemKey.shape),
      bodyExamples: { delete: { summary: 'the preference of a user', value: { namespace: ['users', 'ana'], key: 'prefs' } } },
      responses: { 204: { description: 'Deleted, or there was none' }, ...reads, ...bodies },
      handler: async ({ body, principal }) => {
        await items.deleteItem(principal.tenant, checked('body.namespace', body.namespace, { allowReservedRoot: true }), body.key);
        return { status: 204, body: undefined };
      },
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/store/items/search',
      operationId: 'searchStoreItems',
      summary: 'Items under a namespace prefix whose value matches a filter, by namespace then key',
      readOnly: true,
      body: z.strictObject({
        namespace_prefix: Labels.meta({ description: 'the labels the namespace starts with ([]: every item)' }),
        filter: JsonObjectSchema.optional().meta({ description: 'per value field: the value, or operators ($eq, $ne, $gt, $gte, $lt, $lte, $in, $nin)' }),
        limit: z.number().int().min(1).max(1000).default(10),
        offset: z.number().int().min(0).default(0),
        query: z.string().optional().meta({ description: 'ignored: no vector index' }),
        refresh_ttl: z.boolean().nullable().optional().meta({ description: 'ignored: items do not expire' }),
      }),
      bodyExamples: { prefix: { summary: 'the items of a user', value: { namespace_prefix: ['users', 'ana'], limit: 10, offset: 0 } } },
      responses: { 200: { description: 'A page of items', schema: z.object({ items: z.array(StoreItemSchema) }) }, ...reads, ...bodies },
      handler: async ({ body, principal }) => {
        const prefix = checked('body.namespace_prefix', body.namespace_prefix, { allowEmpty: true, allowReservedRoot: true });
        const found = await searchGraphItems(items, principal.tenant, { prefix, filter: body.filter, offset: body.offset, limit: body.limit });
        return { status: 200, body: { items: found.map(toWire) } };
      },
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/store/namespaces',
      operationId: 'listStoreNamespaces',
      summary: 'The namespaces holding items, in order',
      readOnly: true,
      body: z.strictObject({
        prefix: Labels.optional().meta({ description: 'namespaces starting with these labels ("*" matches any one)' }),
        suffix: Labels.optional().meta({ description: 'namespaces ending with these labels ("*" matches any one)' }),
        max_depth: z.number().int().min(1).optional().meta({ description: 'namespaces cut to this many labels, each listed once' }),
        limit: z.number().int().min(1).max(1000).default(100),
        offset: z.number().int().min(0).default(0),
      }),
      bodyExamples: { all: { summary: 'every namespace', value: { limit: 100, offset: 0 } } },
      responses: { 200: { description: 'A page of namespaces', schema: z.object({ namespaces: z.array(z.array(z.string())) }) }, ...reads, ...bodies },
      handler: async ({ body, principal }) => {
        const conditions: NamespaceCondition[] = [];
        if (body.prefix?.length) conditions.push({ matchType: 'prefix', path: checked('body.prefix', body.prefix, { allowReservedRoot: true }) });
        if (body.suffix?.length) conditions.push({ matchType: 'suffix', path: checked('body.suffix', body.suffix, { allowReservedRoot: true }) });
        const namespaces = await listGraphNamespaces(items, principal.tenant, { conditions, maxDepth: body.max_depth, offset: body.offset, limit: body.limit });
        return { status: 200, body: { namespaces } };
      },
    }),
  ];
}
