import { z } from 'zod';
import { AppError } from '../domain/errors.js';

/**
 * Parses one part of a request (query, params, body, headers) with its schema. A failure is a 400
 * whose message names the offending field, e.g. `query.limit: expected an integer 1–500`.
 */
export function parsePart<T>(part: 'query' | 'params' | 'body' | 'headers', schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = [part, ...issue.path.map(String)].join('.');
  throw new AppError('bad_request', `${field}: ${issue.message}`);
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
