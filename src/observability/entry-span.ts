import { context, ROOT_CONTEXT, SpanKind, trace, type Attributes, type Span } from '@opentelemetry/api';
import { contextOf, failSpan, tracer } from './tracer.js';

/**
 * Runs `fn` inside the span of work that enters agentplane from outside a request it traces
 * (tracing on; just `fn` otherwise), so the runs it starts sit under it:
 * - `from: 'headers'`: an inbound delivery (the webhook receiver). Inside a traced request (the
 *   receiver mounted on an app with server spans) it is a child of that request's span; mounted
 *   on any other app, a server span continuing the sender's `traceparent` (or beginning a trace).
 * - `from: 'root'`: a trace of its own (a schedule fire), a consumer span.
 * `fn` may set attributes on the span; an exception is an error span and is thrown on.
 */
export function inEntrySpan<T>(
  name: string,
  from: { headers: Readonly<Record<string, string | string[] | undefined>> } | 'root',
  attributes: Attributes,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  const traces = tracer();
  if (!traces) return fn(undefined);
  const inRequest = from !== 'root' && trace.getActiveSpan() !== undefined;
  const parent = from === 'root' ? ROOT_CONTEXT : inRequest ? context.active() : contextOf(from.headers);
  const kind = from === 'root' ? SpanKind.CONSUMER : inRequest ? SpanKind.INTERNAL : SpanKind.SERVER;
  return traces.startActiveSpan(name, { kind, attributes, root: from === 'root' }, parent, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}
