import { createServer, type Server } from 'node:http';
import { createApp, type AppOptions, type BuiltApp } from '../http/app.js';
import type { AppDeps, Lifecycle } from '../http/deps.js';
import { clientErrorResponse } from '../http/errors.js';
import { listenOn } from '../http/listen.js';
import { SseHub } from '../http/sse.js';
import { RunWatch } from '../runtime/run-watch.js';
import type { Composition } from './compose.js';

export interface ApiServer extends BuiltApp {
  server: Server;
  deps: AppDeps;
  lifecycle: Lifecycle;
  /** Listens on the configured host and port (port 0 picks a free one); resolves the base URL. */
  listen(): Promise<string>;
}

/**
 * The API of a process on its composition, in an HTTP server tuned for a load balancer:
 * keep-alive longer than the balancer's idle timeout (65 s), and a bound on receiving each
 * request (SSE streams are long-lived responses; each stream also clears its socket timeout).
 * In embedded mode (no REDIS_URL) the same process also executes runs and fires schedules,
 * so one `npm start` serves the whole product; with Redis, runs go to worker processes.
 */
export function createApiServer(composition: Composition, options: AppOptions): ApiServer {
  const { config, backend, metrics } = composition;
  const lifecycle: Lifecycle = { draining: false };
  const deps: AppDeps = {
    config,
    store: backend.store,
    events: backend.events,
    runs: composition.runs,
    schedules: composition.schedules,
    agents: composition.agents,
    graphItems: backend.graphItems,
    assistants: backend.assistants,
    ...(composition.graphs ? { graphs: composition.graphs } : {}),
    webhooks: composition.webhooks,
    logger: composition.logger,
    metrics,
    lifecycle,
    readiness: backend.readiness,
    // On Redis runs execute in worker processes: ready says whether one is alive.
    ...(composition.embedded ? {} : { liveWorkers: () => backend.queue.liveWorkers() }),
    streams: new SseHub({
      heartbeatMs: config.SERVICE_SSE_HEARTBEAT_MS,
      onCount: (open) => metrics.sseConnections.set(open),
      maxPerPrincipal: config.SERVICE_SSE_MAX_PER_PRINCIPAL,
      maxPerTenant: config.SERVICE_SSE_MAX_PER_TENANT,
      maxWaitsPerPrincipal: config.SERVICE_WAIT_MAX_PER_PRINCIPAL,
      onWaitCount: (held) => metrics.waitsHeld.set(held),
    }),
    // A followed run is checked as often as streams get their keep-alive.
    runWatch: new RunWatch({ runs: backend.store.runs, intervalMs: config.SERVICE_SSE_HEARTBEAT_MS, logger: composition.logger }),
  };
  // The http.app of langgraph.json, loaded with the composition, unless the caller gives another.
  const built = createApp(deps, { httpApp: composition.httpApp, ...options });
  // Node checks request timeouts on an interval (30 s by default): check often enough that a
  // slow client is cut close to SERVICE_REQUEST_TIMEOUT_MS.
  const server = createServer(
    { connectionsCheckingInterval: Math.max(250, Math.min(5_000, Math.floor(config.SERVICE_REQUEST_TIMEOUT_MS / 4))) },
    built.app.callback(),
  );
  server.keepAliveTimeout = 66_000;
  // A client has SERVICE_REQUEST_TIMEOUT_MS to send headers and body (slow bodies are cut with
  // 408); the timer ends once the request is received, so event streams are not affected.
  server.requestTimeout = config.SERVICE_REQUEST_TIMEOUT_MS;
  server.headersTimeout = Math.min(67_000, config.SERVICE_REQUEST_TIMEOUT_MS);
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (socket.writable && !socket.writableEnded) socket.end(clientErrorResponse(error.code));
    else socket.destroy();
  });
  if (composition.embedded) {
    composition.startExecuting();
    composition.startScheduling();
    composition.startExpiring();
  }
  return {
    ...built,
    server,
    deps,
    lifecycle,
    listen: async () => (await listenOn(server, { port: config.SERVICE_PORT, host: config.SERVICE_HOST })).url,
  };
}
