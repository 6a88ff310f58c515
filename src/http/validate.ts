import { z } from 'zod';
import { AppError } from '../domain/errors.js';
import { nearestName } from '../domain/nearest-name.js';

/**
 * Parses one part of a request (query, params, body, headers) with its schema. A failure is a 400
 * whose message names the offending field, e.g. `query.limit: expected an integer 1–500`.
 * With `nameUnknown`, fields the schema does not know are reported before anything else, each
 * with the known field it resembles: `body: unknown field "agent" (did you mean "agent_id"?)`
 * (a misspelt field otherwise surfaces as the required one it meant being missing).
 */
export function parsePart<T>(part: 'query' | 'params' | 'body' | 'headers', schema: z.ZodType<T>, value: unknown, nameUnknown = false): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const unknown = nameUnknown ? result.error.issues.find((i) => i.code === 'unrecognized_keys') : undefined;
  const issue = unknown ?? result.error.issues[0]!;
  const field = [part, ...issue.path.map(String)].join('.');
  if (unknown?.code === 'unrecognized_keys') {
    const known = fieldsAt(schema, unknown.path);
    const named = unknown.keys.map((key) => {
      const guess = nearestName(key, known);
      return `unknown field ${JSON.stringify(key)}${guess ? ` (did you mean ${JSON.stringify(guess)}?)` : ''}`;
    });
    throw new AppError('bad_request', `${field}: ${named.join('; ')}`);
  }
  throw new AppError('bad_request', `${field}: ${issue.message}`);
}

/** The field names of the object schema at `path` inside `schema`, through optional, nullable, default, pipe and array wrappers; none when there is no object there. */
function fieldsAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let current = unwrap(schema);
  for (const step of path) {
    if (current instanceof z.ZodArray && typeof step === 'number') current = unwrap(current.element as z.ZodType);
    else if (current instanceof z.ZodObject && typeof step === 'string') current = unwrap((current.shape as Record<string, z.ZodType>)[step]);
    else return [];
  }
  return current instanceof z.ZodObject ? Object.keys(current.shape) : [];
}

function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let current = schema;
  for (;;) {
    const def = current?._zod.def as { innerType?: z.ZodType; in?: z.ZodType } | undefined;
    const inner = def?.innerType ?? def?.in;
    if (!inner) return current;
    current = inner;
  }
}

/** An integer query parameter given as a decimal string, within bounds, with a default. */
export function intQuery(min: number, max: number, fallback: number) {
  return z
    .string()
    .regex(/^\d+$/, { error: `expected an integer from ${min} to ${max}` })
    .transform(Number)
    .pipe(z.number().int().min(min, { error: `expected an integer from ${min} to ${max}` }).max(max, { error: `expected an integer from ${min} to ${max}` }))
    .optional()
    .transform((v) => v ?? fallback)
    .meta({ type: 'integer', minimum: min, maximum: max, default: fallback });
}

/** `limit` (1–`max`, default `fallback`) and `offset` (≥ 0, default 0) of a list read. */
export function pageQuery(fallback: number, max: number) {
  return {
    limit: intQuery(1, max, fallback).meta({ description: `page size (1–${max})` }),
    offset: intQuery(0, Number.MAX_SAFE_INTEGER, 0).meta({ description: 'items to skip' }),
  };
}
