import { OpenApiBuilder, type OpenAPIObject, type ParameterObject, type SchemaObject, type TagObject } from 'openapi3-ts/oas31';
import { z } from 'zod';
import type { AnyRoute } from './route.js';

export interface OpenApiOptions {
  title: string;
  version: string;
  /** The credential scheme of the document (and the console's "Authorize"); `none` declares none. */
  auth: 'none' | 'jwt' | 'apikey';
  apiKeyHeader: string;
  /** Tags described in the document (each listed only when a route carries it). @defaultValue none */
  tags?: readonly TagObject[];
}

const DEFS = '#/$defs/';
const COMPONENTS = '#/components/schemas/';

/**
 * Builds the OpenAPI 3.1 document from the same route declarations the router is built from.
 * Zod schemas become JSON Schema; named schemas (`.meta({ id })`) land in components.
 */
export function buildOpenApi(routes: readonly AnyRoute[], options: OpenApiOptions): OpenAPIObject {
  const builder = OpenApiBuilder.create().addOpenApiVersion('3.1.0').addInfo({
    title: options.title,
    version: options.version,
    description: 'Control and observation of agent runs: sessions, checkpoints, traces, events, approvals, schedules.',
  });
  const components: Record<string, SchemaObject> = {};
  const toSchema = (schema: z.ZodType, io: 'input' | 'output'): SchemaObject => {
    const { $schema: _drop, $defs, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
    for (const [name, def] of Object.entries(($defs ?? {}) as Record<string, unknown>)) components[name] = relink(def) as SchemaObject;
    return relink(json) as SchemaObject;
  };

  if (options.auth === 'jwt') builder.addSecurityScheme('bearer', { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
  if (options.auth === 'apikey') builder.addSecurityScheme('apiKey', { type: 'apiKey', in: 'header', name: options.apiKeyHeader });
  const security = options.auth === 'jwt' ? [{ bearer: [] }] : options.auth === 'apikey' ? [{ apiKey: [] }] : undefined;

  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const parameters: ParameterObject[] = [
      ...objectParameters(route.params, 'path', toSchema),
      ...objectParameters(route.query, 'query', toSchema),
      ...objectParameters(route.headers, 'header', toSchema),
    ];
    const responses: Record<string, unknown> = {};
    for (const [status, spec] of Object.entries(route.responses)) {
      const contentType = spec.contentType ?? 'application/json';
      const media = {
        ...(spec.schema ? { schema: toSchema(spec.schema, 'output') } : {}),
        ...(spec.examples ? { examples: spec.examples } : {}),
      };
      responses[status] = {
        description: spec.description,
        ...(spec.schema || spec.contentType ? { content: { [contentType]: media } } : {}),
        ...(spec.headers
          ? {
              headers: Object.fromEntries(
                Object.entries(spec.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }]),
              ),
            }
          : {}),
      };
    }
    (paths[path] ??= {})[route.method.toLowerCase()] = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(route.body
        ? {
            requestBody: {
              // A body whose every field is optional may be left out: the router reads none as {}.
              required: !route.body.safeParse({}).success,
              content: {
                'application/json': {
                  schema: toSchema(route.body, 'input'),
                  ...(route.bodyExamples ? { examples: route.bodyExamples } : {}),
                },
              },
            },
          }
        : {}),
      responses,
      ...(!route.public && security ? { security } : {}),
    };
  }
  for (const tag of options.tags ?? []) if (routes.some((route) => route.tag === tag.name)) builder.addTag(tag);
  for (const [path, item] of Object.entries(paths)) builder.addPath(path, item);
  for (const [name, schema] of Object.entries(components)) builder.addSchema(name, schema);
  return withoutEmptyComponents(builder.getSpec());
}

/**
 * The builder starts every component map empty. An empty `securitySchemes` still makes Swagger
 * UI show its "Authorize" button, which with authentication off leads nowhere: drop empty maps.
 */
function withoutEmptyComponents(spec: OpenAPIObject): OpenAPIObject {
  const components = Object.fromEntries(
    Object.entries(spec.components ?? {}).filter(([, map]) => Object.keys(map as object).length > 0),
  );
  const { components: _all, ...rest } = spec;
  return Object.keys(components).length > 0 ? { ...rest, components } : rest;
}

function objectParameters(
  schema: z.ZodType | undefined,
  where: 'query' | 'path' | 'header',
  toSchema: (schema: z.ZodType, io: 'input' | 'output') => SchemaObject,
): ParameterObject[] {
  if (!schema) return [];
  if (!(schema instanceof z.ZodObject)) throw new Error(`${where} schemas must be z.object(...)`);
  return Object.entries(schema.shape as Record<string, z.ZodType>).map(([name, field]) => {
    const { description, ...fieldSchema } = toSchema(field, 'input');
    return {
      // Header names are declared in lower case (as Node hands them over) and documented as written on the wire.
      name: where === 'header' ? name.replace(/(^|-)([a-z])/g, (_all, dash: string, letter: string) => dash + letter.toUpperCase()) : name,
      in: where,
      required: where === 'path' || !field.safeParse(undefined).success,
      ...(typeof description === 'string' ? { description } : {}),
      schema: fieldSchema,
    };
  });
}

function relink(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value).replaceAll(`"${DEFS}`, `"${COMPONENTS}`));
}
