import { context, propagation, ROOT_CONTEXT, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type { TraceCarrier } from '../domain/types.js';

let active: Tracer | undefined;

/** What the spans record beyond the defaults, as the process's settings ask (read once, when tracing starts). */
export interface TracingOptions {
  /** Model messages, tool arguments and results on GenAI spans: `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`. */
  captureMessageContent: boolean;
  /** The tenant on run spans (`agentplane.tenant`): `AGENTPLANE_OTEL_RECORD_TENANT=true`; it may name a customer. */
  recordTenant: boolean;
}

const NOTHING_MORE: TracingOptions = Object.freeze({ captureMessageContent: false, recordTenant: false });
let options: TracingOptions = NOTHING_MORE;

/**
 * The tracer of this process, or undefined when tracing is off. Instrumentation asks this once
 * per operation and does nothing else when it is undefined: no span objects, no context, so a
 * process without `OTEL_*` settings pays one property read.
 */
export function tracer(): Tracer | undefined {
  return active;
}

/** Set by startTracing/stopTracing (src/observability/tracing.ts) only. */
export function setTracer(next: Tracer | undefined, nextOptions: TracingOptions = NOTHING_MORE): void {
  active = next;
  options = nextOptions;
}

/** What the spans of this process record beyond the defaults (both off unless tracing is on and the settings ask). */
export function tracingOptions(): TracingOptions {
  return options;
}

/** The W3C trace context (`traceparent`, `tracestate`) of the active span, for a job or a request; undefined when there is none. */
export function activeCarrier(from: Context = context.active()): TraceCarrier | undefined {
  if (!active || !trace.getSpan(from)) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(from, carrier);
  return carrier.traceparent ? { traceparent: carrier.traceparent, ...(carrier.tracestate ? { tracestate: carrier.tracestate } : {}) } : undefined;
}

/** The context a carrier (or incoming headers) continues: the root context when it holds no valid trace. */
export function contextOf(carrier: TraceCarrier | Readonly<Record<string, string | string[] | undefined>> | undefined): Context {
  return carrier ? propagation.extract(ROOT_CONTEXT, carrier as Record<string, string | string[] | undefined>) : ROOT_CONTEXT;
}

/** Ends a span with an error status and the error's class as `error.type`. */
export function failSpan(span: Span, error: unknown, type?: string): void {
  const message = error instanceof Error ? error.message : String(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
  span.setAttribute('error.type', type ?? (error instanceof Error ? error.name : 'error'));
}

/** The ids a stored span carries of the span it was exported as (lower-case hex). */
export function exportedIds(span: Span | undefined): { trace_id: string; trace_span_id: string } | undefined {
  if (!span) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, trace_span_id: spanId };
}

/** The exported ids of the active span, when tracing is on and one is (a stored span written inside it). */
export function activeExportedIds(): { trace_id: string; trace_span_id: string } | undefined {
  return active ? exportedIds(trace.getActiveSpan()) : undefined;
}
