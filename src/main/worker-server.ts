import { createServer, type Server } from 'node:http';
import { hostname } from 'node:os';
import Koa from 'koa';
import type { Lifecycle } from '../http/deps.js';
import { listenOn } from '../http/listen.js';
import { anonymous } from '../http/middleware/authenticate.js';
import { requestContext } from '../http/middleware/request-context.js';
import { buildRouter } from '../http/router.js';
import { probeRoutes } from '../http/routes/probes.js';
import type { Composition } from './compose.js';

export interface WorkerServer {
  server: Server;
  lifecycle: Lifecycle;
  /** Listens on WORKER_PORT; resolves the base URL of the probes. */
  listen(): Promise<string>;
}

/**
 * A worker: executes run jobs and fires schedules of its composition, and serves its own
 * /metrics and probes on WORKER_PORT (readiness: Redis answers and no shutdown started).
 */
export function createWorker(composition: Composition): WorkerServer {
  const { config, backend, metrics, logger } = composition;
  const lifecycle: Lifecycle = { draining: false };
  composition.startExecuting();
  composition.startScheduling();
  composition.startExpiring();

  const router = buildRouter(probeRoutes({ readiness: backend.readiness, lifecycle, metrics }), {
    authenticate: anonymous,
    rbac: false,
    maxBodyBytes: 1024,
  });
  const app = new Koa();
  app.silent = true;
  app.use(requestContext({ logger, metrics, replicaId: config.SERVICE_REPLICA_ID ?? hostname(), isDraining: () => lifecycle.draining }));
  app.use(router.routes());
  const server = createServer(app.callback());
  return {
    server,
    lifecycle,
    listen: async () => (await listenOn(server, { port: config.WORKER_PORT, host: config.SERVICE_HOST })).url,
  };
}
