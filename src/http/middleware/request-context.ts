import { randomUUID } from 'node:crypto';
import { Stream } from 'node:stream';
import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import { AppError } from '../../domain/errors.js';
import { renderError, toAppError } from '../errors.js';
import type { Metrics } from '../../observability/metrics.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The paths of the probes and /metrics: asked every few seconds, so their requests are logged at debug. */
const PROBE_PATHS: ReadonlySet<string> = new Set(['/healthz', '/health', '/health/live', '/health/ready', '/metrics']);

export interface RequestContextOptions {
  logger: Logger;
  metrics: Metrics;
  /** Value of `X-Served-By`: which replica answered. */
  replicaId: string;
  /** True once a graceful shutdown started: answers carry `Connection: close`. */
  isDraining: () => boolean;
}

/**
 * Serializes a JSON body (an object or array; Koa would otherwise do it after every middleware
 * returned) here, so that a body JSON cannot hold (past V8's longest string: "Invalid string
 * length"; a BigInt) is an error this middleware renders, logs and counts with the status
 * sent, instead of Koa's plain-text 500 after a log line that said 200. The Content-Type Koa
 * set for the object stays.
 */
function serializeJsonBody(ctx: Context): void {
  const { body } = ctx;
  if (body === null || typeof body !== 'object' || body instanceof Stream) return;
  // Plain objects and arrays only: a Buffer, a stream, a Blob or a Response is Koa's to send.
  const prototype = Object.getPrototypeOf(body) as unknown;
  if (Array.isArray(body) || prototype === Object.prototype || prototype === null) ctx.body = JSON.stringify(body);
}

/**
 * The outermost middleware: request id, the one error renderer, a request log line (at debug
 * for the probes and /metrics, at info otherwise) and the HTTP metrics. A thrown error never
 * escapes it, so a bad request cannot take the process down.
 */
export function requestContext(options: RequestContextOptions): Middleware {
  const { logger, metrics, replicaId, isDraining } = options;
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('X-Request-Id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    ctx.set('X-Served-By', replicaId);
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new AppError('not_found', `No route matches ${ctx.method} ${ctx.path}.`);
      }
      serializeJsonBody(ctx);
    } catch (error) {
      const appError = toAppError(error);
      if (appError.code === 'internal') {
        logger.error({ err: error, requestId, method: ctx.method, path: ctx.path }, 'request failed');
      }
      renderError(ctx, appError);
      // A body left half-read would stall the next request on this keep-alive connection.
      if (!ctx.req.complete) ctx.set('Connection', 'close');
    }
    if (isDraining()) ctx.set('Connection', 'close');
    const route = (ctx.state.routePattern as string | undefined) ?? 'unmatched';
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    metrics.httpRequests.inc({ method: ctx.method, route, status: String(ctx.status) });
    metrics.httpDuration.observe({ method: ctx.method, route }, seconds);
    logger[PROBE_PATHS.has(route) ? 'debug' : 'info'](
      { requestId, method: ctx.method, route, path: ctx.path, status: ctx.status, ms: Math.round(seconds * 1000) },
      'request',
    );
  };
}
