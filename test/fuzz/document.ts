/**
 * The parts of the served OpenAPI 3.1 document the fuzzer reads, and the operations in it.
 * Everything the fuzz suite does is derived from this document, so a route added later is
 * fuzzed without touching the suite.
 */

export type JsonSchema = { [keyword: string]: unknown } | boolean;

export interface ParameterDoc {
  name: string;
  in: 'query' | 'path' | 'header' | 'cookie';
  required?: boolean;
  schema?: JsonSchema;
}

export interface MediaDoc {
  schema?: JsonSchema;
}

export interface ResponseDoc {
  description: string;
  content?: Record<string, MediaDoc>;
}

export interface OperationDoc {
  operationId?: string;
  tags?: string[];
  parameters?: ParameterDoc[];
  requestBody?: { required?: boolean; content: Record<string, MediaDoc> };
  responses: Record<string, ResponseDoc>;
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, unknown> & { parameters?: ParameterDoc[] }>;
  components?: { schemas?: Record<string, JsonSchema> };
}

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** One operation of the document, with its path-level parameters merged in. */
export interface Operation {
  method: HttpMethod;
  /** The document's path template, e.g. `/api/runs/{id}`. */
  path: string;
  /** `GET /api/runs/{id}`: how tests and reports name it. */
  name: string;
  doc: OperationDoc;
  parameters: ParameterDoc[];
  /** The `application/json` request body schema, when the operation takes a body. */
  body?: JsonSchema;
  /** True when a 2xx answer is a `text/event-stream`: never read to the end, never validated. */
  streams: boolean;
}

/** Every operation of the document, in document order. */
export function operationsOf(doc: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of HTTP_METHODS) {
      const op = item[method.toLowerCase()] as OperationDoc | undefined;
      if (!op) continue;
      const own = op.parameters ?? [];
      const inherited = (item.parameters ?? []).filter((p) => !own.some((o) => o.name === p.name && o.in === p.in));
      operations.push({
        method,
        path,
        name: `${method} ${path}`,
        doc: op,
        parameters: [...inherited, ...own],
        body: op.requestBody?.content['application/json']?.schema,
        streams: Object.entries(op.responses).some(
          ([status, response]) => status.startsWith('2') && Object.keys(response.content ?? {}).some((type) => type.startsWith('text/event-stream')),
        ),
      });
    }
  }
  return operations;
}

/** Follows `$ref` (a JSON pointer into the document) until the schema is not a reference. */
export function deref(doc: OpenApiDocument, schema: JsonSchema | undefined): JsonSchema {
  let current: JsonSchema = schema ?? {};
  for (let hops = 0; typeof current === 'object' && typeof current.$ref === 'string'; hops++) {
    if (hops > 32) throw new Error(`$ref cycle at ${current.$ref}`);
    const ref = current.$ref;
    if (!ref.startsWith('#/')) throw new Error(`only local $refs are supported, got ${ref}`);
    let target: unknown = doc;
    for (const part of ref.slice(2).split('/')) {
      target = (target as Record<string, unknown> | undefined)?.[part.replaceAll('~1', '/').replaceAll('~0', '~')];
    }
    if (target === undefined) throw new Error(`unresolved $ref ${ref}`);
    const { $ref: _ref, ...siblings } = current;
    current = Object.keys(siblings).length > 0 ? { ...(target as object), ...siblings } : (target as JsonSchema);
  }
  return current;
}

/** The object form of a schema (`true` → `{}`; `false` → `{ not: {} }`). */
export function schemaObject(schema: JsonSchema): Record<string, unknown> {
  if (schema === true) return {};
  if (schema === false) return { not: {} };
  return schema;
}

/** The declared types of a schema (`type` as a string or a list), empty when unconstrained. */
export function typesOf(schema: Record<string, unknown>): string[] {
  const type = schema.type;
  if (typeof type === 'string') return [type];
  return Array.isArray(type) ? (type as string[]) : [];
}

/** `/a/b?x=1` → `['/a/b', 'x=1']` */
export function splitTarget(target: string): [string, string?] {
  const index = target.indexOf('?');
  return index < 0 ? [target] : [target.slice(0, index), target.slice(index + 1)];
}

/** The decoded path parameters when `path` matches the template, as the router decodes them. */
export function matchPath(template: string, path: string): Record<string, string> | undefined {
  const names: string[] = [];
  const pattern = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{([^}]+)\}/g, (_m, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  const match = new RegExp(`^${pattern}$`).exec(path);
  if (!match) return undefined;
  return Object.fromEntries(
    names.map((name, i) => {
      const raw = match[i + 1]!;
      try {
        return [name, decodeURIComponent(raw)];
      } catch {
        return [name, raw];
      }
    }),
  );
}
