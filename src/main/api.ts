import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { exitOnConfigError, loadConfigOrExit, type Config } from '../config.js';
import { loadAgents } from '../runtime/registry.js';
import { createApiProcess } from './embedded.js';
import { createLogger } from './logger.js';
import { limiterFactoryFor, securityOptions } from './security.js';
import { createShutdown, onTerminationSignals } from './shutdown.js';

/**
 * Runs one API replica (or, without REDIS_URL, the embedded single process) until SIGTERM.
 */
export async function runApi(config: Config): Promise<void> {
  const logger = createLogger(config.LOG_LEVEL);
  const agents = await loadAgents(config.AGENTS_MODULE);
  const { api, backend } = exitOnConfigError(() =>
    createApiProcess(config, logger, agents, (b) => securityOptions(config, limiterFactoryFor(config, b))),
  );
  const url = await api.listen();
  logger.info({ url, mode: backend.mode, swagger: config.SERVICE_SWAGGER ? `${url}/swagger/` : undefined }, 'agentplane api listening');
  onTerminationSignals(
    createShutdown({
      server: api.server,
      lifecycle: api.lifecycle,
      logger,
      delayMs: config.SERVICE_SHUTDOWN_DELAY_MS,
      timeoutMs: config.SERVICE_SHUTDOWN_TIMEOUT_MS,
      endStreams: () => api.deps.streams.endAll(),
      close: () => backend.close(),
    }),
  );
  process.on('unhandledRejection', (error) => logger.error({ err: error }, 'unhandled rejection'));
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await runApi(loadConfigOrExit());
}
