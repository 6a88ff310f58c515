import { allowedHosts } from '../http/local-guard.js';
import { bootProcess, listenOrExit, listeningAt, openAccessLine, shutdownOnSignals } from './process.js';
import { createWorker } from './worker-server.js';

/**
 * `npm run start:worker`: executes runs from the `runs` queue and fires schedules. SIGTERM
 * stops taking jobs, lets running ones finish within SERVICE_SHUTDOWN_TIMEOUT_MS, hands back
 * the rest, exits 0.
 */
const composition = await bootProcess({ role: 'worker', needsRedis: 'The worker needs REDIS_URL; without it `npm start` runs API and worker in one process.' });
const { config, logger, agents } = composition;
const worker = createWorker(composition);
await listenOrExit({ host: 'SERVICE_HOST', port: 'WORKER_PORT' }, { host: config.SERVICE_HOST, port: config.WORKER_PORT }, () => worker.listen());
const { address, url } = listeningAt(worker.server, config.SERVICE_HOST);
logger.info({ address, url, concurrency: config.WORKER_CONCURRENCY, agents: agents.list().map((a) => a.id) }, 'agentplane worker started');
if (config.SERVICE_AUTH === 'none') logger.warn(openAccessLine('SERVICE_AUTH=none', address, allowedHosts(config.SERVICE_ALLOWED_HOSTS, true)));
shutdownOnSignals(composition, worker, { delayMs: 0, timeoutMs: config.SERVICE_SHUTDOWN_TIMEOUT_MS + 5_000 });
