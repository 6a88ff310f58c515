import { hostname } from 'node:os';
import Koa, { type Middleware } from 'koa';
import { clientAddressMiddleware } from '../http/client-address.js';
import type { Lifecycle } from '../http/deps.js';
import { localGuard, type LocalGuardOptions } from '../http/local-guard.js';
import { anonymous } from '../http/middleware/authenticate.js';
import { requestContext } from '../http/middleware/request-context.js';
import { serverSpans } from '../http/middleware/server-span.js';
import { buildRouter } from '../http/router.js';
import { probeRoutes } from '../http/routes/probes.js';
import type { Composition } from './compose.js';

/**
 * The Koa app of a process beside the API (a worker, the webhook receiver): the API's request
 * context (request id, the one JSON error body, a 404 for unknown paths, request logs and HTTP
 * metrics), its probes and /metrics, then `middleware` (the process's own endpoints). With
 * `guard`, only the Host names (and Origins) it allows are answered, probes included.
 */
export function serviceApp(composition: Composition, lifecycle: Lifecycle, middleware: readonly Middleware[] = [], guard?: LocalGuardOptions): Koa {
  const { config, backend, metrics, logger } = composition;
  const router = buildRouter(probeRoutes({ readiness: backend.readiness, lifecycle, metrics }), {
    authenticate: anonymous,
    rbac: false,
    maxBodyBytes: 1024,
  });
  const app = new Koa({ proxy: false });
  const spans = serverSpans();
  if (spans) app.use(spans);
  app.silent = true;
  app.use(clientAddressMiddleware(config.SERVICE_TRUST_PROXY, config.SERVICE_TRUSTED_PROXIES));
  app.use(requestContext({ logger, metrics, replicaId: config.SERVICE_REPLICA_ID ?? hostname(), isDraining: () => lifecycle.draining }));
  if (guard && (guard.hosts !== undefined || guard.origins)) app.use(localGuard(guard));
  app.use(router.routes());
  for (const step of middleware) app.use(step);
  return app;
}
