import { createServer, type Server } from 'node:http';
import type { Lifecycle } from '../http/deps.js';
import { listenOn } from '../http/listen.js';
import type { Composition } from './compose.js';
import { serviceApp } from './service-app.js';

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
  const { config } = composition;
  const lifecycle: Lifecycle = { draining: false };
  composition.startExecuting();
  composition.startScheduling();
  composition.startExpiring();

  const server = createServer(serviceApp(composition, lifecycle).callback());
  return {
    server,
    lifecycle,
    listen: async () => (await listenOn(server, { port: config.WORKER_PORT, host: config.SERVICE_HOST })).url,
  };
}
