import { loadConfigOrExit } from '../src/config.js';
import { createBackend } from '../src/main/backend.js';
import { createLogger } from '../src/main/logger.js';
import { createShutdown, onTerminationSignals } from '../src/main/shutdown.js';
import { createWorker } from '../src/main/worker.js';
import { loadAgents } from '../src/runtime/registry.js';

/**
 * `npm run start:worker`: executes runs from the `runs` queue. SIGTERM stops taking jobs,
 * lets running ones finish within SERVICE_SHUTDOWN_TIMEOUT_MS, hands back the rest, exits 0.
 */
const config = loadConfigOrExit();
const logger = createLogger(config.LOG_LEVEL);
if (!config.REDIS_URL) {
  logger.fatal('The worker needs REDIS_URL; without it `npm start` runs API and worker in one process.');
  process.exit(1);
}
const agents = await loadAgents(config.AGENTS_MODULE);
const backend = createBackend(config, logger);
const worker = createWorker(config, backend, agents, logger);
const url = await worker.listen();
logger.info({ url, concurrency: config.WORKER_CONCURRENCY, agents: agents.list().map((a) => a.id) }, 'agentplane worker started');
process.on('unhandledRejection', (error) => logger.error({ err: error }, 'unhandled rejection'));
onTerminationSignals(
  createShutdown({
    server: worker.server,
    lifecycle: worker.lifecycle,
    logger,
    delayMs: 0,
    timeoutMs: config.SERVICE_SHUTDOWN_TIMEOUT_MS + 5_000,
    close: () => backend.close(),
  }),
);
