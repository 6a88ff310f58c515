import { trace } from '@opentelemetry/api';
import { tracer } from './tracer.js';

/**
 * What a log line adds (pino's `mixin`): the `trace_id` and `span_id` of the active span, when
 * tracing is on and one is. A new object each time: pino merges the line into it.
 */
export function logTraceIds(): Record<string, string> {
  if (!tracer()) return {};
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
