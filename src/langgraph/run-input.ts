import { Command, Send } from '@langchain/langgraph';
import type { StateSnapshot } from '@langchain/langgraph';
import type { Approval } from '../domain/types.js';
import type { GraphRunInput } from '../ports/graph-threads.js';
import { isApprovalExpiry, isTimeoutAction, type PauseRequest } from '../runtime/run/run-attempt.js';
import { promptOf, toJson } from './values.js';

/** One interrupt of a paused graph, as LangGraph reports it. */
export interface PendingInterrupt {
  id: string;
  value: unknown;
  node: string;
}

/** The approval id of a graph interrupt: the run id, then LangGraph's interrupt id (unique per interrupt). */
export function graphApprovalId(runId: string, interruptId: string): string {
  return `${runId}.${interruptId}`;
}

/**
 * The approval a pending interrupt asks for: its prompt (see {@link promptOf}), the whole value
 * as its payload, and the expiry its value's `expires_in_ms`/`on_timeout` fields give, when valid.
 */
export function pauseRequestOf(runId: string, pending: PendingInterrupt): PauseRequest {
  const { value } = pending;
  const fields = value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  const expires = isApprovalExpiry(fields.expires_in_ms) ? fields.expires_in_ms : undefined;
  return {
    id: graphApprovalId(runId, pending.id),
    node: pending.node,
    prompt: promptOf(value),
    payload: toJson(value),
    ...(expires ? { expiresInMs: expires, onTimeout: isTimeoutAction(fields.on_timeout) ? fields.on_timeout : 'reject' } : {}),
  };
}

/** What an answered approval resumes its interrupt with: the `resume` given, else `{ approved, comment }`. */
export function answerOf(approval: Approval | null): { value: unknown } | undefined {
  if (approval?.status !== 'approved' && approval?.status !== 'rejected') return undefined;
  return { value: approval.resume !== undefined ? approval.resume : { approved: approval.status === 'approved', comment: approval.comment ?? '' } };
}

/** The interrupts a paused graph waits on, each with the node that asked, in task order. */
export function interruptsOf(snapshot: StateSnapshot): PendingInterrupt[] {
  const found: PendingInterrupt[] = [];
  for (const task of snapshot.tasks) {
    for (const pending of task.interrupts ?? []) {
      if (typeof pending.id === 'string') found.push({ id: pending.id, value: pending.value, node: task.name });
    }
  }
  return found;
}

/** A run's stored `graph_input`; nothing asked when it has none. */
export function parseRunInput(stored: string | null): GraphRunInput {
  return stored === null ? {} : (JSON.parse(stored) as GraphRunInput);
}

/** What to stream for what a run was asked: its command as a LangGraph Command, else its input. */
export function streamInputOf(asked: GraphRunInput): unknown {
  if (!asked.command) return asked.input ?? null;
  const { goto, ...rest } = asked.command;
  // A client's `goto` may name nodes, or send them input as `{ node, input }` (LangGraph's Send).
  const toSend = (target: unknown) =>
    target !== null && typeof target === 'object' && typeof (target as { node?: unknown }).node === 'string'
      ? new Send((target as { node: string }).node, (target as { input?: unknown }).input)
      : target;
  const targets = goto === undefined ? undefined : Array.isArray(goto) ? goto.map(toSend) : toSend(goto);
  return new Command({ ...rest, ...(targets === undefined ? {} : { goto: targets }) } as ConstructorParameters<typeof Command>[0]);
}
