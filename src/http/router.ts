import Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import bodyParser from 'koa-bodyparser';
import { AppError } from '../domain/errors.js';
import { jsonProblem } from '../domain/json-problem.js';
import { roleAtLeast, type Principal } from '../domain/types.js';
import { ANONYMOUS_PRINCIPAL, type Authenticate } from './middleware/authenticate.js';
import { requiredRole, type AnyRoute } from './route.js';
import { parsePart } from './validate.js';

export interface RouterOptions {
  authenticate: Authenticate;
  /** Enforce roles (SERVICE_RBAC with authentication on). */
  rbac: boolean;
  maxBodyBytes: number;
  /** Run before authentication on every non-public route (the global rate limit). */
  beforeAuth?: Middleware[];
  /** Run after authentication and RBAC (quotas per key and tenant). */
  afterAuth?: Middleware[];
}

/**
 * Builds the Koa router from the route declarations. Each route becomes one pipeline:
 * limits → authenticate → RBAC → quotas → body → validate → handler. Unknown paths fall
 * through to the 404 of the error renderer; a known path with another method is 405 + Allow.
 */
export function buildRouter(routes: readonly AnyRoute[], options: RouterOptions): Router {
  const router = new Router();
  const parseJson = bodyParser({
    enableTypes: ['json'],
    jsonLimit: `${options.maxBodyBytes}b`,
    strict: true,
  });

  for (const route of routes) {
    const stages: Middleware[] = [markRoute(route)];
    if (!route.public) {
      stages.push(...(options.beforeAuth ?? []).map(unlessGuarded), authenticateStage(route, options), ...(options.afterAuth ?? []));
    }
    if (route.body) stages.push(route.anyContentType ? readAsJson : requireJson, parseJson, limitDepth);
    stages.push(handle(route));
    router.register(route.path, [route.method], stages);
  }
  return router;
}

function markRoute(route: AnyRoute): Middleware {
  return async (ctx, next) => {
    ctx.state.routePattern = route.path;
    if (route.errorDetail) ctx.state.errorDetail = true;
    await next();
  };
}

/** A stage skipped for a request guarded already (`ctx.state.guarded`: rate-limited and authenticated in front of the `http.app`). */
const unlessGuarded =
  (stage: Middleware): Middleware =>
  (ctx, next) =>
    ctx.state.guarded ? next() : stage(ctx, next);

/** The global rate limit and authentication of a non-public request, for middleware in front of the router; sets `ctx.state.principal`. */
export function guardRequest(options: Pick<RouterOptions, 'authenticate' | 'beforeAuth'>): (ctx: Context) => Promise<void> {
  return async (ctx) => {
    for (const stage of options.beforeAuth ?? []) {
      let passed = false;
      await stage(ctx, async () => {
        passed = true;
      });
      if (!passed) throw new AppError('rate_limited', 'Too many requests.');
    }
    ctx.state.principal = await options.authenticate(ctx);
    ctx.state.guarded = true;
  };
}

function authenticateStage(route: AnyRoute, options: RouterOptions): Middleware {
  const needed = requiredRole(route);
  return async (ctx, next) => {
    const principal = ctx.state.guarded ? (ctx.state.principal as Principal) : await options.authenticate(ctx);
    ctx.state.principal = principal;
    if (options.rbac && !roleAtLeast(principal.role, needed)) {
      throw new AppError('forbidden', `This operation needs the ${needed} role.`);
    }
    await next();
  };
}

async function requireJson(ctx: Context, next: Next): Promise<void> {
  const hasBody = Number(ctx.get('Content-Length') || 0) > 0 || ctx.get('Transfer-Encoding') !== '';
  if (hasBody && !ctx.is('application/json')) {
    throw new AppError('unsupported_media_type', 'The request body must be application/json.');
  }
  await next();
}

/** A body of any Content-Type is parsed as JSON (a route with `anyContentType`): it must still be JSON (400). */
async function readAsJson(ctx: Context, next: Next): Promise<void> {
  const hasBody = Number(ctx.get('Content-Length') || 0) > 0 || ctx.get('Transfer-Encoding') !== '';
  if (hasBody && !ctx.is('application/json')) ctx.req.headers['content-type'] = 'application/json';
  await next();
}

async function limitDepth(ctx: Context, next: Next): Promise<void> {
  const problem = jsonProblem((ctx.request as { body?: unknown }).body);
  if (problem) throw new AppError('bad_request', problem);
  await next();
}

function handle(route: AnyRoute): Middleware {
  return async (ctx) => {
    const input = {
      query: route.query ? parsePart('query', route.query, ctx.query) : undefined,
      params: route.params ? parsePart('params', route.params, ctx.params) : undefined,
      // Our own routes name an unknown body field and guess the one meant; the LangGraph routes answer as LangGraph's server.
      body: route.body ? parsePart('body', route.body, (ctx.request as { body?: unknown }).body, route.path.startsWith('/api/')) : undefined,
      headers: route.headers ? parsePart('headers', route.headers, ctx.headers) : undefined,
      principal: (ctx.state.principal as Principal | undefined) ?? ANONYMOUS_PRINCIPAL,
      ctx,
    };
    const result = await route.handler(input);
    if (result === 'handled') return;
    ctx.status = result.status;
    for (const [name, value] of Object.entries(result.headers ?? {})) ctx.set(name, value);
    ctx.body = result.body;
  };
}

/** 405 with `Allow` for a path that exists with other methods. */
export function methodNotAllowed(router: Router): Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.state.routePattern !== undefined || ctx.status !== 404 || ctx.body !== undefined) return;
    const matched = router.match(ctx.path, ctx.method);
    const methods = new Set(matched.path.flatMap((layer) => layer.methods));
    if (methods.size === 0) return;
    // The metrics label it with the path's pattern, as any request of a known route.
    ctx.state.routePattern = matched.path[0]?.path;
    throw new AppError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}.`, {
      headers: { Allow: [...methods].join(', ') },
    });
  };
}
