import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { loadConfigOrExit, type Config } from '../config.js';
import type { Lifecycle } from '../http/deps.js';
import { loadAgents } from '../runtime/registry.js';
import { compose, type Composition } from './compose.js';
import { createLogger } from './logger.js';
import { createShutdown, onTerminationSignals } from './shutdown.js';

/**
 * What every process entry point does first: read the config (a bad value prints the variable
 * and exits 1), make the logger, load the agents, and compose the process. With `needsRedis`
 * set, a process that cannot work without Redis says why and exits 1 when REDIS_URL is unset.
 */
export async function bootProcess(options: { needsRedis?: string; config?: Config } = {}): Promise<Composition> {
  const config = options.config ?? loadConfigOrExit();
  const logger = createLogger(config.LOG_LEVEL);
  if (options.needsRedis && !config.REDIS_URL) {
    logger.fatal(options.needsRedis);
    process.exit(1);
  }
  process.on('unhandledRejection', (error) => logger.error({ err: error }, 'unhandled rejection'));
  const agents = await loadAgents(config.AGENTS_MODULE);
  return compose(config, { logger, agents });
}

/** Wires SIGTERM and SIGINT to the ordered graceful shutdown of a process's server. */
export function shutdownOnSignals(
  composition: Composition,
  server: { server: Server; lifecycle: Lifecycle },
  options: { delayMs: number; timeoutMs: number; endStreams?: () => void; closeFirst?: () => Promise<void> },
): void {
  const logger: Logger = composition.logger;
  onTerminationSignals(
    createShutdown({
      server: server.server,
      lifecycle: server.lifecycle,
      logger,
      delayMs: options.delayMs,
      timeoutMs: options.timeoutMs,
      endStreams: options.endStreams,
      close: async () => {
        await options.closeFirst?.();
        await composition.close();
      },
    }),
  );
}
