import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { AppOptions } from '../http/app.js';
import type { AgentRegistry } from '../runtime/registry.js';
import { createBackend, type Backend } from './backend.js';
import { startExecuting, startScheduling } from './executor-wiring.js';
import { createApiServer, type ApiServer } from './server.js';

export interface ApiProcess {
  api: ApiServer;
  backend: Backend;
}

/**
 * The HTTP side of a process on its backend. Without REDIS_URL this is the embedded default:
 * the same process also executes runs from the in-memory queue and fires schedules,
 * so one `npm start` serves the whole product. With Redis, runs go to worker processes.
 */
export function createApiProcess(
  config: Config,
  logger: Logger,
  agents: AgentRegistry,
  optionsFor: (backend: Backend) => AppOptions,
): ApiProcess {
  const backend = createBackend(config, logger);
  const api = createApiServer(config, backend, logger, optionsFor(backend), agents);
  if (backend.mode === 'memory') {
    startExecuting(config, backend, agents, logger, api.deps.metrics);
    startScheduling(config, backend, agents, logger, api.deps.metrics);
  }
  return { api, backend };
}
