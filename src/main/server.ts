import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { createApp, type AppOptions, type BuiltApp } from '../http/app.js';
import { clientErrorResponse } from '../http/errors.js';
import type { AppDeps, Lifecycle } from '../http/deps.js';
import { Metrics } from '../http/metrics.js';
import { SseHub } from '../http/sse.js';
import { builtInAgents } from '../agents/index.js';
import { AgentRegistry } from '../runtime/registry.js';
import { createRunControl } from '../runtime/run-control.js';
import type { Backend } from './backend.js';

export interface ApiServer extends BuiltApp {
  server: Server;
  deps: AppDeps;
  lifecycle: Lifecycle;
  /** Listens on the configured host and port (port 0 picks a free one); resolves the base URL. */
  listen(): Promise<string>;
}

/**
 * Builds the API app on a backend and wraps it in an HTTP server tuned for a load balancer:
 * keep-alive longer than the balancer's idle timeout (65 s), headers timeout above that, and
 * no request timeout (SSE streams are long-lived; each stream also clears its socket timeout).
 */
export function createApiServer(
  config: Config,
  backend: Backend,
  logger: Logger,
  options: AppOptions,
  agents: AgentRegistry = new AgentRegistry(builtInAgents),
): ApiServer {
  const lifecycle: Lifecycle = { draining: false };
  const metrics = new Metrics({ pendingApprovals: () => backend.store.countPendingApprovals() });
  const { store, events, queue } = backend;
  const deps: AppDeps = {
    config,
    store,
    events,
    agents,
    runControl: createRunControl({ store, queue, events, agents }),
    scheduler: backend.scheduler,
    logger,
    metrics,
    lifecycle,
    readiness: backend.readiness,
    streams: new SseHub({
      heartbeatMs: config.SERVICE_SSE_HEARTBEAT_MS,
      onCount: (open) => metrics.sseConnections.set(open),
    }),
  };
  const built = createApp(deps, options);
  const server = createServer(built.app.callback());
  server.keepAliveTimeout = 66_000;
  server.headersTimeout = 67_000;
  server.requestTimeout = 0;
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (socket.writable && !socket.writableEnded) socket.end(clientErrorResponse(error.code));
    else socket.destroy();
  });
  return {
    ...built,
    server,
    deps,
    lifecycle,
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.SERVICE_PORT, config.SERVICE_HOST, () => {
          const address = server.address();
          const port = typeof address === 'object' && address ? address.port : config.SERVICE_PORT;
          const host = config.SERVICE_HOST === '0.0.0.0' ? '127.0.0.1' : config.SERVICE_HOST;
          resolve(`http://${host}:${port}`);
        });
      }),
  };
}
