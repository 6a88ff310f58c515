import { context, trace } from '@opentelemetry/api';
import type { Approval, TraceCarrier } from '../domain/types.js';
import { activeCarrier, contextOf, tracer } from '../observability/tracer.js';
import type { Store } from '../ports/store.js';

/**
 * The run's own trace, kept with it: a run started in a traced request stores that request's
 * W3C trace context in its stored input (`trace`, beside `webhook`), so what happens to the run
 * later, in another trace (an approval's resume, a cancel, its webhook), can be linked to it or
 * continue it. Nothing is stored when tracing is off.
 */
export function runTraceField(): { trace?: TraceCarrier } {
  const carrier = activeCarrier();
  return carrier ? { trace: carrier } : {};
}

/** The trace context stored with a run ({@link runTraceField}), from its stored input as parsed. */
export function storedRunTrace(asked: Readonly<Record<string, unknown>>): TraceCarrier | undefined {
  const stored = asked.trace as Partial<TraceCarrier> | undefined;
  return typeof stored?.traceparent === 'string' ? { traceparent: stored.traceparent, ...(typeof stored.tracestate === 'string' ? { tracestate: stored.tracestate } : {}) } : undefined;
}

/**
 * What the resume job of a decided approval carries beside the approver's trace (tracing on):
 * the run's own (`run_trace`), which the resumed attempt's span links to; one read of the run's
 * stored input. The decision is an event of the approver's request span (of a span `approval
 * decided` under it when that span ended before the decision, as a chat adapter's does).
 */
export async function approvalResumeTrace(store: Pick<Store, 'runs'>, tenant: string, approval: Approval): Promise<{ run_trace?: TraceCarrier }> {
  const traces = tracer();
  if (!traces) return {};
  const decided = { 'agentplane.approval.id': approval.id, 'agentplane.run.id': approval.run_id, 'agentplane.approval.status': approval.status };
  const active = trace.getActiveSpan();
  if (active?.isRecording() !== false) active?.addEvent('agentplane.approval.decided', decided);
  else {
    // The span ended already (a chat adapter's delivery, acknowledged before its handler
    // decided): the event goes on a span of its own under it, so the trace still shows it.
    const span = traces.startSpan('approval decided', { attributes: decided }, context.active());
    span.addEvent('agentplane.approval.decided', decided);
    span.end();
  }
  const stored = await store.runs.getRunInput(tenant, approval.run_id);
  const runTrace = stored === null ? undefined : storedRunTrace(JSON.parse(stored) as Record<string, unknown>);
  return runTrace ? { run_trace: runTrace } : {};
}

/**
 * The trace a run's webhook delivery continues (tracing on): the active one when it is the
 * run's (the attempt that ended it: the POST is a child of the run's span), else the run's
 * stored trace (a run ended by a cancel request, or in an approval's resume, which has a trace
 * of its own), else the active one.
 */
export function webhookTrace(asked: Readonly<Record<string, unknown>>): { trace?: TraceCarrier } {
  if (!tracer()) return {};
  const active = activeCarrier();
  const stored = storedRunTrace(asked);
  const traceId = (carrier: TraceCarrier) => carrier.traceparent.split('-')[1];
  const carrier = stored && (!active || traceId(active) !== traceId(stored)) ? stored : active;
  return carrier ? { trace: carrier } : {};
}

/** Runs `fn` in the trace a job carries (tracing on), else as it is: a worker's work continues whoever queued it. */
export function inJobTrace<T>(carrier: TraceCarrier | undefined, fn: () => Promise<T>): Promise<T> {
  return carrier && tracer() ? context.with(contextOf(carrier), fn) : fn();
}
