import { hostname } from 'node:os';
import Koa, { type Middleware } from 'koa';
import type { OpenAPIObject } from 'openapi3-ts/oas31';
import type { AppDeps } from './deps.js';
import { requestContext } from './middleware/request-context.js';
import { serverSpans } from './middleware/server-span.js';
import { normalPath } from './middleware/normal-path.js';
import { buildOpenApi } from './openapi.js';
import type { AnyRoute } from './route.js';
import type { Authenticate } from './middleware/authenticate.js';
import { clientAddressMiddleware } from './client-address.js';
import { allowedOrigin, corsMiddleware, corsPolicy, langgraphJsonCors } from './cors.js';
import { allowedHosts, localGuard } from './local-guard.js';
import { langgraphAssistantRoutes } from './langgraph/assistant-routes.js';
import { langgraphCronRoutes } from './langgraph/cron-routes.js';
import { LANGGRAPH_TAG } from './langgraph/define.js';
import { langgraphMetaRoutes } from './langgraph/meta-routes.js';
import { langgraphUiRoutes } from './langgraph/ui-routes.js';
import type { UiBundles } from '../ports/ui-bundles.js';
import { langgraphProtocolRoutes } from './langgraph/protocol-routes.js';
import { langgraphRunRoutes } from './langgraph/run-routes.js';
import { langgraphStoreRoutes } from './langgraph/store-routes.js';
import { langgraphThreadStateRoutes } from './langgraph/thread-state-routes.js';
import { langgraphThreadRoutes } from './langgraph/thread-routes.js';
import { buildRouter, guardRequest, methodNotAllowed } from './router.js';
import { customAppMiddleware } from './custom-app.js';
import type { HttpApp } from '../ports/http-app.js';
import { approvalRoutes } from './routes/approvals.js';
import { eventRoutes } from './routes/events.js';
import { probeRoutes } from './routes/probes.js';
import { queueRoutes } from './routes/queue.js';
import { runRoutes } from './routes/runs.js';
import { scheduleRoutes } from './routes/schedules.js';
import { sessionRoutes } from './routes/sessions.js';
import { traceRoutes } from './routes/traces.js';
import { swaggerConsole } from './swagger.js';
import { webConsole } from './console.js';
import { exampleChatPage } from './example-pages.js';

/** Everything the app factory needs beyond the shared deps: the caller resolution and limits. */
export interface AppOptions {
  authenticate: Authenticate;
  /** Middleware before authentication on non-public routes (global rate limit); built from deps for the metrics. */
  beforeAuth?: (deps: AppDeps) => Middleware[];
  /** Middleware after authentication on non-public routes (quotas). */
  afterAuth?: (deps: AppDeps) => Middleware[];
  /** Routes added by other components (runs, approvals, events, schedules). */
  extraRoutes?: (deps: AppDeps) => AnyRoute[];
  /** The `http.app` of langgraph.json, served in front of the routes (src/http/custom-app.ts). */
  httpApp?: HttpApp | undefined;
  /** The generative UI bundles of langgraph.json `ui`, served at /ui/{name} (src/http/langgraph/ui-routes.ts). */
  uiBundles?: UiBundles | undefined;
  /** Endpoints that verify their callers themselves (the chat gateway's), served before the routes and the http.app. */
  endpoints?: readonly Middleware[];
}

/** agentplane's version, in the OpenAPI document and LangGraph's GET /info. */
const VERSION = '0.1.0';

export interface BuiltApp {
  app: Koa;
  routes: readonly AnyRoute[];
  openapi: OpenAPIObject;
}

/** Every declared route of the app, in declaration order. */
export function declaredRoutes(deps: AppDeps, options: Pick<AppOptions, 'extraRoutes' | 'uiBundles'> = {}): AnyRoute[] {
  return [
    ...probeRoutes(deps),
    ...sessionRoutes(deps),
    ...traceRoutes(deps),
    ...runRoutes(deps),
    ...queueRoutes(deps),
    ...eventRoutes(deps),
    ...(deps.config.SERVICE_APPROVALS ? approvalRoutes(deps) : []),
    ...(deps.config.SERVICE_SCHEDULES ? scheduleRoutes(deps) : []),
    ...(deps.config.SERVICE_SCHEDULES ? langgraphCronRoutes(deps) : []),
    ...langgraphMetaRoutes(deps, { version: VERSION }),
    ...langgraphAssistantRoutes(deps),
    ...langgraphStoreRoutes(deps),
    ...langgraphRunRoutes(deps),
    ...langgraphThreadRoutes(deps),
    ...langgraphThreadStateRoutes(deps),
    ...langgraphProtocolRoutes(deps),
    ...langgraphUiRoutes(options.uiBundles),
    ...(options.extraRoutes?.(deps) ?? []),
  ];
}

/**
 * The Koa app of an API replica: request context and error rendering outermost, then the
 * consoles and the example page, then the router built from the route declarations.
 */
export function createApp(deps: AppDeps, options: AppOptions): BuiltApp {
  const { config } = deps;
  const routes = declaredRoutes(deps, options);
  const openapi = buildOpenApi(routes, {
    title: 'agentplane',
    version: VERSION,
    auth: config.SERVICE_AUTH,
    apiKeyHeader: config.SERVICE_API_KEY_HEADER,
    tags: [LANGGRAPH_TAG],
  });
  const router = buildRouter(routes, {
    authenticate: options.authenticate,
    rbac: config.SERVICE_RBAC && config.SERVICE_AUTH !== 'none',
    maxBodyBytes: config.SERVICE_MAX_BODY_BYTES,
    beforeAuth: options.beforeAuth?.(deps),
    afterAuth: options.afterAuth?.(deps),
  });

  const app = new Koa({ proxy: false });
  const spans = serverSpans();
  if (spans) app.use(spans);
  app.use(clientAddressMiddleware(config.SERVICE_TRUST_PROXY, config.SERVICE_TRUSTED_PROXIES));
  app.silent = true;
  app.on('error', (error: unknown) => deps.logger.error({ err: error }, 'unhandled koa error'));
  app.use(
    requestContext({
      logger: deps.logger,
      metrics: deps.metrics,
      replicaId: config.SERVICE_REPLICA_ID ?? hostname(),
      isDraining: () => deps.lifecycle.draining,
    }),
  );
  // One path for every decision that follows (consoles, authentication, routing, the http.app).
  app.use(normalPath({ errorDetail: detailFaces(routes) }));
  // Browsers of other origins: after the request context (preflights are logged and carry a
  // request id), before the consoles and the routes (a preflight is answered before auth).
  const authOff = config.SERVICE_AUTH === 'none';
  const cors = corsPolicy(config.SERVICE_CORS_ORIGINS, config.SERVICE_LANGGRAPH_JSON ? langgraphJsonCors(config.SERVICE_LANGGRAPH_JSON) : undefined, authOff);
  const hosts = allowedHosts(config.SERVICE_ALLOWED_HOSTS, authOff);
  if (hosts !== undefined || authOff) {
    app.use(
      localGuard({
        hosts,
        hostsVariable: 'SERVICE_ALLOWED_HOSTS',
        // Without authentication a page of another origin may call only when CORS allows it to.
        ...(authOff ? { origins: (origin: string) => cors !== undefined && allowedOrigin(cors, origin) !== undefined, originsVariable: 'SERVICE_CORS_ORIGINS' } : {}),
      }),
    );
  }
  if (cors) app.use(corsMiddleware(cors));
  if (config.SERVICE_SWAGGER) app.use(swaggerConsole(() => openapi));
  if (config.SERVICE_CONSOLE) {
    app.use(
      webConsole({
        auth: config.SERVICE_AUTH,
        api_key_header: config.SERVICE_API_KEY_HEADER,
        approvals: config.SERVICE_APPROVALS,
        schedules: config.SERVICE_SCHEDULES,
      }),
    );
  }
  if (config.SERVICE_EXAMPLES) app.use(exampleChatPage());
  for (const endpoint of options.endpoints ?? []) app.use(endpoint);
  if (options.httpApp) {
    const publicPaths = new Set(routes.filter((route) => route.public).map((route) => route.path));
    app.use(
      customAppMiddleware({
        app: options.httpApp,
        isPublic: (ctx) => {
          const matched = router.match(ctx.path, ctx.method).pathAndMethod;
          return matched.length > 0 && matched.every((layer) => typeof layer.path === 'string' && publicPaths.has(layer.path));
        },
        guard: guardRequest({ authenticate: options.authenticate, beforeAuth: options.beforeAuth?.(deps) }),
        maxBodyBytes: config.SERVICE_MAX_BODY_BYTES,
      }),
    );
  }
  app.use(methodNotAllowed(router));
  app.use(router.routes());
  return { app, routes, openapi };
}

/**
 * Whether a path is under a first segment only routes declared with `errorDetail` use (the
 * LangGraph Server API's `/threads`, `/runs`, …): its errors before routing carry `detail` too.
 */
function detailFaces(routes: readonly AnyRoute[]): (path: string) => boolean {
  const first = (path: string) => path.split('/')[1] ?? '';
  const detailed = new Set(routes.filter((r) => r.errorDetail).map((r) => first(r.path)));
  for (const route of routes) if (!route.errorDetail) detailed.delete(first(route.path));
  return (path) => detailed.has(first(path));
}
