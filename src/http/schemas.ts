import { z } from 'zod';
import { ID_PATTERN } from '../domain/types.js';

/** Zod schemas of the wire types: validation and the OpenAPI document both come from these. */

export const Timestamp = z.string().meta({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' });

export const IdParam = z.string().regex(ID_PATTERN, { error: 'expected 1–128 characters of A-Z a-z 0-9 . _ : -' });

export const JsonObjectSchema = z.record(z.string(), z.unknown()).meta({ description: 'free-form key/value object' });

export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string().meta({ example: 'bad_request' }),
      message: z.string(),
    }),
  })
  .meta({ id: 'Error' });

export const SessionSchema = z
  .object({
    id: z.string(),
    agent_id: z.string(),
    tenant_id: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Session' });

export const CheckpointSchema = z
  .object({
    session_id: z.string(),
    checkpoint_id: z.string(),
    node_id: z.string().meta({ description: 'node the session runs next when resumed; __end__ once completed' }),
    state: JsonObjectSchema,
    seq_num: z.number().int().min(1),
    created_at: Timestamp,
  })
  .meta({ id: 'Checkpoint' });

export const SpanSchema = z
  .object({
    span_id: z.string(),
    parent_id: z.string().meta({ description: 'empty string for a root span' }),
    name: z.string(),
    start: Timestamp,
    end: Timestamp,
    attributes: JsonObjectSchema,
  })
  .meta({ id: 'Span' });

export const HealthSchema = z.object({ status: z.literal('ok') });

export const ReadySchema = z.object({
  status: z.enum(['ready', 'unavailable']),
  checks: z.record(z.string(), z.string()),
});

/** Standard error responses of a route, by status, for the OpenAPI document. */
export function errorResponses(...statuses: number[]): Record<number, { description: string; schema: typeof ErrorSchema }> {
  const text: Record<number, string> = {
    400: 'Malformed query or body',
    401: 'Missing or invalid credential',
    403: 'Role lacks permission',
    404: 'Not found (or owned by another tenant)',
    409: 'Conflict with the current state',
    412: 'If-Match precondition failed',
    413: 'Body too large',
    415: 'Body is not application/json',
    429: 'Rate limit or quota exceeded (or too many open streams and waits)',
    503: 'Storage or the event subscription is unavailable; retry shortly',
  };
  return Object.fromEntries(statuses.map((s) => [s, { description: text[s] ?? 'Error', schema: ErrorSchema }]));
}

/** What starting or resuming a run answers: the run is queued for a worker. */
export const RunTicketSchema = z
  .object({ run_id: z.string(), session_id: z.string(), status: z.literal('queued') })
  .meta({ id: 'RunTicket' });
