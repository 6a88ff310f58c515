import { z } from 'zod';
import { IDEMPOTENCY_KEY_PATTERN, idempotentStart } from '../../domain/idempotency.js';
import { TERMINAL_RUN_STATUSES, type Principal } from '../../domain/types.js';
import type { RunTicket, StartRunOptions, StartRunRequest } from '../../ports/run-control.js';

/**
 * What the three start routes (POST /api/runs, /wait, /stream) share for `Idempotency-Key`:
 * the header, the key as the stores keep it, and how a start answered from it is marked.
 */

/** The request header of the three start routes. */
export const StartHeaders = z.object({
  'idempotency-key': z
    .string()
    .regex(IDEMPOTENCY_KEY_PATTERN, { error: 'expected 1–255 visible ASCII characters (no spaces), e.g. a UUID' })
    .optional()
    .meta({
      description:
        'one key per logical start, the same on each retry of it (a UUID): for 24 h, a start with the same key and run fields answers ' +
        'the run the first one started (with `Idempotent-Replayed: true`) instead of starting another; other fields answer 422',
    }),
});

/** The start's Idempotency-Key, scoped to the caller, over the fields that make the run (`wait_ms` is not one). */
export function keyed(principal: Principal, headers: z.infer<typeof StartHeaders>, request: StartRunRequest): StartRunOptions {
  const key = headers['idempotency-key'];
  return key === undefined ? {} : { idempotency: idempotentStart(principal.subject, key, { ...request }) };
}

/** What a start answers in its body, and the headers: its URL, and the mark of an answer from an Idempotency-Key. */
export function answerOf(ticket: RunTicket): { body: RunTicket; headers: Record<string, string> } {
  return {
    body: { run_id: ticket.run_id, session_id: ticket.session_id, status: 'queued' },
    headers: { Location: `/api/runs/${ticket.run_id}`, ...(ticket.replayed ? { 'Idempotent-Replayed': 'true' } : {}) },
  };
}

/** A replayed run that already stopped: its stop event came before this request subscribed. */
export const stoppedBefore = (ticket: RunTicket) =>
  ticket.replayed !== undefined && (ticket.replayed === 'interrupted' || TERMINAL_RUN_STATUSES.includes(ticket.replayed));

/** The response header of a start answered from its Idempotency-Key, for the OpenAPI document. */
export const REPLAYED_HEADER = { 'Idempotent-Replayed': '`true` when answered from an earlier start with the same Idempotency-Key' };
