import { createServer, type Server } from 'node:http';
import { hostname } from 'node:os';
import Koa from 'koa';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Lifecycle } from '../http/deps.js';
import { Metrics } from '../http/metrics.js';
import { requestContext } from '../http/middleware/request-context.js';
import { anonymous } from '../http/middleware/authenticate.js';
import { buildRouter } from '../http/router.js';
import { probeRoutes } from '../http/routes/probes.js';
import type { AgentRegistry } from '../runtime/registry.js';
import type { Backend } from './backend.js';
import { startExecuting, startScheduling } from './executor-wiring.js';

export interface WorkerProcess {
  server: Server;
  lifecycle: Lifecycle;
  metrics: Metrics;
  /** Listens on WORKER_PORT; resolves the base URL of the probes. */
  listen(): Promise<string>;
}

/**
 * A worker: consumes the `runs` queue with the executor and serves its own /metrics and
 * probes on WORKER_PORT (readiness: Redis answers and no shutdown started).
 */
export function createWorker(config: Config, backend: Backend, agents: AgentRegistry, logger: Logger): WorkerProcess {
  const lifecycle: Lifecycle = { draining: false };
  const metrics = new Metrics({ pendingApprovals: () => backend.store.countPendingApprovals() });
  startExecuting(config, backend, agents, logger, metrics);
  startScheduling(config, backend, agents, logger, metrics);

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
    metrics,
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.WORKER_PORT, config.SERVICE_HOST, () => {
          const address = server.address();
          const port = typeof address === 'object' && address ? address.port : config.WORKER_PORT;
          resolve(`http://127.0.0.1:${port}`);
        });
      }),
  };
}
