import { z } from 'zod';
import type { ErrorCode } from '../domain/errors.js';
import { MAX_WEBHOOK_URL_BYTES, webhookUrlProblem } from '../domain/run-webhook.js';
import { ID_PATTERN } from '../domain/types.js';
import { statusOf } from './errors.js';
import type { ResponseSpec } from './route.js';

/** Zod schemas of the wire types: validation and the OpenAPI document both come from these. */

export const Timestamp = z.string().meta({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' });

export const IdParam = z.string().regex(ID_PATTERN, { error: 'expected 1–128 characters of A-Z a-z 0-9 . _ : -' });

export const JsonObjectSchema = z.record(z.string(), z.unknown()).meta({ description: 'free-form key/value object' });

/** A run webhook (LangGraph's `webhook`): validated as RunControl.startRun validates it, so a route answers 400 first. */
export const WebhookUrlSchema = z
  .string()
  .max(MAX_WEBHOOK_URL_BYTES)
  .superRefine((url, ctx) => {
    // A path is checked where it is known whether there is an http.app to take it (RunControl).
    const problem = webhookUrlProblem(url, { paths: true });
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .meta({
    format: 'uri',
    description:
      'POST the run here when it ends (completed, failed or cancelled), signed per Standard Webhooks; http or https, at most 2 KiB. Loopback, link-local and private addresses are refused at delivery unless SERVICE_WEBHOOK_ALLOW_PRIVATE is set.',
  });

export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string().meta({ description: 'stable, machine-readable (`not_found`, `conflict`, …); one status per code' }),
      message: z.string().meta({ description: 'one human sentence; wording may change' }),
    }),
  })
  .meta({ id: 'Error' });

export const SessionSchema = z
  .object({
    id: z.string(),
    agent_id: z.string().meta({ description: "the agent its runs belong to; '' for a session created before its first run (a LangGraph thread), which that run binds" }),
    tenant_id: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
    metadata: JsonObjectSchema.meta({ description: "free-form JSON (a LangGraph thread's metadata), at most 64 KiB; {} when none" }),
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
    trace_id: z.string().optional().meta({ description: 'OpenTelemetry trace id it was exported under, when tracing is on' }),
    trace_span_id: z.string().optional().meta({ description: 'OpenTelemetry span id it was exported as, when tracing is on' }),
  })
  .meta({ id: 'Span' });

export const HealthSchema = z.object({ status: z.literal('ok') });

export const ReadySchema = z.object({
  status: z.enum(['ready', 'unavailable']),
  checks: z.record(z.string(), z.string()),
});

/**
 * A message each error code really answers with, for the examples of the OpenAPI document. The
 * first code of a status is the one shown when a route names only the status.
 */
const ERROR_MESSAGES: Record<ErrorCode, string> = {
  bad_request: 'query.limit: expected an integer from 1 to 500',
  invalid_cron: 'cron_expr: expected exactly 5 fields (minute hour day-of-month month day-of-week), got 1',
  unknown_agent: 'Agent "string" is not registered.',
  unauthorized: 'A bearer token is required.',
  forbidden: 'This operation needs the user role.',
  not_found: 'The session was not found.',
  gone: 'The run 0195f3c2-7d41-7a0e-9b1c-4f7e2d9a1b20 no longer exists: its session was removed (deleted, expired, or lost by the storage).',
  method_not_allowed: 'DELETE is not allowed on /api/sessions.',
  conflict: 'This session already has a queued, running or interrupted run.',
  precondition_failed: 'The latest checkpoint has another seq_num than If-Match names.',
  payload_too_large: 'The request body is larger than the limit.',
  unsupported_media_type: 'The request body must be application/json.',
  idempotency_key_reused: 'This Idempotency-Key was used for a start with other fields; send a new key for a new start.',
  rate_limited: 'Too many requests (global limit); retry in 12 s.',
  internal: 'An internal error occurred.',
  unavailable: 'Storage is unreachable; retry shortly.',
};

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Malformed query or body',
  401: 'Missing or invalid credential',
  403: 'Role lacks permission',
  404: 'Not found (or owned by another tenant)',
  409: 'Conflict with the current state',
  410: 'The run the request followed no longer exists (its session was removed)',
  412: 'If-Match precondition failed',
  413: 'Body too large',
  415: 'Body is not application/json',
  422: 'Idempotency-Key already used for another start',
  429: 'Rate limit or quota exceeded (or too many open streams and waits)',
  503: 'Storage or the event subscription is unavailable; retry shortly',
};

/**
 * The error responses of a route for the OpenAPI document, each with an example body per code.
 * Name a status (`404`) for its usual code, or codes (`'unknown_agent'`) where one status has
 * several: `errorResponses('bad_request', 'unknown_agent', 401, 409)`.
 */
export function errorResponses(...entries: (number | ErrorCode)[]): Record<number, ResponseSpec> {
  const codes = new Map<number, ErrorCode[]>();
  for (const entry of entries) {
    const code = typeof entry === 'number' ? defaultCode(entry) : entry;
    const status = statusOf(code);
    const list = codes.get(status) ?? [];
    if (!list.includes(code)) codes.set(status, [...list, code]);
  }
  return Object.fromEntries(
    [...codes].map(([status, list]) => [
      status,
      {
        description: ERROR_DESCRIPTIONS[status] ?? 'Error',
        schema: ErrorSchema,
        examples: Object.fromEntries(
          list.map((code) => [code, { summary: code, value: { error: { code, message: ERROR_MESSAGES[code] } } }]),
        ),
      },
    ]),
  );
}

function defaultCode(status: number): ErrorCode {
  const code = (Object.keys(ERROR_MESSAGES) as ErrorCode[]).find((c) => statusOf(c) === status);
  if (!code) throw new Error(`no error code has the status ${status}`);
  return code;
}

/** What starting or resuming a run answers: the run is queued for a worker. */
export const RunTicketSchema = z
  .object({ run_id: z.string(), session_id: z.string(), status: z.literal('queued') })
  .meta({ id: 'RunTicket' });
