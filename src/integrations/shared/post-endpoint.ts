import type { Context, Middleware } from 'koa';
import { AppError } from '../../domain/errors.js';
import { inEntrySpan } from '../../observability/entry-span.js';
import { MAX_BODY_BYTES, readRawBody } from './read-raw-body.js';
import { methodNotAllowed, respondError, unauthorized } from './respond-error.js';
import type { SignatureCheck, SignatureVerifier } from './signature-verifier.js';

export interface PostEndpointOptions {
  /** Path served; must start with `/`. */
  path: string;
  /** Serve every path beneath `path` too. @defaultValue false */
  subpaths?: boolean;
  /** Name used in the 503 message once `stopped()` holds. */
  name: string;
  /** True once the integration is stopping: requests are refused with 503. */
  stopped(): boolean;
  /** Checks made before the body is read (shared secrets), so strangers cannot make us read 1 MiB; throws to refuse. */
  authorize?(ctx: Context): void;
  /** Largest body read; past it 413 and `handle` is not called. @defaultValue 1 MiB ({@link MAX_BODY_BYTES}) */
  maxBodyBytes?: number;
  /** Checked over the raw body; a failure is 401 and `handle` is not called. */
  signature?: SignatureVerifier;
  /** Handles a request whose body has been read (at most `maxBodyBytes`) and verified (`check`: the signature's outcome). */
  handle(ctx: Context, body: Buffer, check: SignatureCheck | undefined): void | Promise<void>;
  /**
   * With tracing on, `handle` runs in a span of this name continuing the sender's `traceparent`
   * (src/observability/entry-span.ts: a server span, or a child of the request's span on an app
   * that has them), so the work it starts, in the background too, sits in the sender's trace.
   * Unset: no span of its own (the chat gateway, whose app makes server spans).
   */
  span?: string;
}

/**
 * The pipeline every inbound integration endpoint shares: path → stopped (503) → POST only
 * (405) → authorize → raw body up to `maxBodyBytes` (413) → signature (401) → handle. Other
 * paths go to `next`; errors are rendered with the API's error body and never escape to
 * the app. Throws a TypeError for a `maxBodyBytes` that is not an integer from 1 to 1 MiB (the
 * spec's read limit).
 */
export function postEndpoint(options: PostEndpointOptions): Middleware {
  if (!options.path.startsWith('/')) throw new TypeError(`${options.name} path must start with /`);
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 1 || maxBodyBytes > MAX_BODY_BYTES) {
    throw new TypeError(`${options.name} maxBodyBytes must be an integer from 1 to ${MAX_BODY_BYTES}`);
  }
  const path = options.path.length > 1 ? options.path.replace(/\/+$/, '') : options.path;
  const serves = (requested: string): boolean =>
    requested === path || (options.subpaths === true && requested.startsWith(path === '/' ? '/' : `${path}/`));
  const { span } = options;
  const handle: PostEndpointOptions['handle'] =
    span === undefined ? options.handle : (ctx, body, check) => inEntrySpan(span, { headers: ctx.req.headers }, {}, async () => options.handle(ctx, body, check));
  return async (ctx, next) => {
    if (!serves(ctx.path)) return next();
    // One metrics label for the endpoint and everything beneath it.
    ctx.state.routePattern ??= path;
    try {
      if (options.stopped()) throw new AppError('unavailable', `The ${options.name} is shutting down.`);
      if (ctx.method !== 'POST') throw methodNotAllowed();
      options.authorize?.(ctx);
      const body = await readRawBody(ctx.req, maxBodyBytes);
      const check = options.signature?.(body, ctx.req.headers);
      if (check && !check.ok) throw unauthorized(check.reason);
      await handle(ctx, body, check);
    } catch (error) {
      respondError(ctx, error);
    }
  };
}
