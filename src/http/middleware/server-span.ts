import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE, ATTR_URL_PATH, ATTR_URL_SCHEME } from '@opentelemetry/semantic-conventions';
import type { Middleware } from 'koa';
import { contextOf, tracer } from '../../observability/tracer.js';

/**
 * The server span of each request, when tracing is on (undefined otherwise: no middleware at
 * all). It continues the caller's `traceparent`/`tracestate` (or begins a trace), covers every
 * later middleware (the error renderer included, so a 5xx is an error span), and is named by
 * the route template the router matched (`POST /api/runs`, `http.route`), like the metrics;
 * a request no route matched is named by its method alone. Goes first, before the request context.
 */
export function serverSpans(): Middleware | undefined {
  const traces = tracer();
  if (!traces) return undefined;
  return async (ctx, next) => {
    const parent = contextOf(ctx.headers);
    const span = traces.startSpan(
      ctx.method,
      { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: ctx.method, [ATTR_URL_PATH]: ctx.path, [ATTR_URL_SCHEME]: ctx.protocol } },
      parent,
    );
    try {
      await context.with(trace.setSpan(parent, span), next);
    } finally {
      const route = ctx.state.routePattern as string | undefined;
      if (route) span.updateName(`${ctx.method} ${route}`).setAttribute(ATTR_HTTP_ROUTE, route);
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, ctx.status);
      if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR }).setAttribute('error.type', String(ctx.status));
      span.end();
    }
  };
}
