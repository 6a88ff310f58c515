import { createServer, type Server } from 'node:http';
import type { Lifecycle } from '../http/deps.js';
import { listenOn } from '../http/listen.js';
import { allowedHosts } from '../http/local-guard.js';
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
 * /metrics and probes on WORKER_PORT (readiness: Redis answers and no shutdown started), on
 * SERVICE_HOST and to the Host names the API answers.
 */
export function createWorker(composition: Composition): WorkerServer {
  const { config } = composition;
  const lifecycle: Lifecycle = { draining: false };
  composition.startExecuting();
  composition.startScheduling();
  composition.startExpiring();

  // The API's rule: without authentication, only loopback and SERVICE_ALLOWED_HOSTS names.
  const hosts = allowedHosts(config.SERVICE_ALLOWED_HOSTS, config.SERVICE_AUTH === 'none');
  const server = createServer(serviceApp(composition, lifecycle, [], { hosts, hostsVariable: 'SERVICE_ALLOWED_HOSTS' }).callback());
  return {
    server,
    lifecycle,
    listen: async () => (await listenOn(server, { port: config.WORKER_PORT, host: config.SERVICE_HOST })).url,
  };
}
