import { z } from 'zod';
import { deleteStoreItem, getStoreItem, listStoreNamespaces, putStoreItem, searchStoreItems } from '../../langgraph-server/store-items.js';
import type { AppDeps } from '../deps.js';
import type { AnyRoute } from '../route.js';
import { JsonObjectSchema, Timestamp } from '../schemas.js';
import { defineLangGraphRoute, langgraphErrors } from './define.js';

/** The routes of the LangGraph Server API's store (src/langgraph-server/store-items.ts), scoped to the caller's tenant. */

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

const ItemKey = z.object({ namespace: Labels, key: z.string() });

/** PUT, GET and DELETE /store/items, POST /store/items/search and /store/namespaces. */
export function langgraphStoreRoutes(deps: Pick<AppDeps, 'graphItems'>): AnyRoute[] {
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
        await putStoreItem(deps, principal.tenant, { field: 'body.namespace', namespace: body.namespace }, body.key, body.value);
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
        const found = await getStoreItem(deps, principal.tenant, { field: 'query.namespace', namespace: query.namespace ? query.namespace.split('.') : [] }, query.key);
        ctx.status = 200;
        // A null body would otherwise turn into 204: JSON null is LangGraph's answer for none.
        ctx.type = 'application/json';
        ctx.body = found;
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
        await deleteStoreItem(deps, principal.tenant, { field: 'body.namespace', namespace: body.namespace }, body.key);
        return { status: 204, body: undefined };
      },
    }),
    defineLangGraphRoute({
      method: 'POST',
      path: '/store/items/search',
      operationId: 'searchStoreItems',
      summary: 'Items under a namespace prefix whose value matches a filter, by namespace, then in the order put',
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
        const prefix = { field: 'body.namespace_prefix', namespace: body.namespace_prefix };
        const items = await searchStoreItems(deps, principal.tenant, { prefix, filter: body.filter, offset: body.offset, limit: body.limit });
        return { status: 200, body: { items } };
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
        const namespaces = await listStoreNamespaces(deps, principal.tenant, {
          ...(body.prefix ? { prefix: { field: 'body.prefix', namespace: body.prefix } } : {}),
          ...(body.suffix ? { suffix: { field: 'body.suffix', namespace: body.suffix } } : {}),
          maxDepth: body.max_depth,
          offset: body.offset,
          limit: body.limit,
        });
        return { status: 200, body: { namespaces } };
      },
    }),
  ];
}
