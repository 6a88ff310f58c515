import { exitOnConfigError, loadConfigOrExit } from '../config.js';
import type { Lifecycle } from '../http/deps.js';
import { hostPort, listen } from '../http/listen.js';
import { allowedHosts } from '../http/local-guard.js';
import { globalRateLimit } from '../http/middleware/rate-limit.js';
import { loadWebhooksConfig } from '../integrations/webhook/config.js';
import { configuredReceiver } from '../integrations/webhook/configured-receiver.js';
import { bootProcess, openAccessLine, shutdownOnSignals } from './process.js';
import { serviceApp } from './service-app.js';

/**
 * `npm run start:webhooks`: the webhook receiver on WEBHOOK_PORT. Each delivery whose type has
 * a route in WEBHOOK_ROUTES starts a run of the route's agent; the run is queued on Redis for
 * the workers, exactly like POST /api/runs. Beside /webhook it serves what the API does for
 * operators: probes, /metrics, request ids, JSON errors, and the global rate limit
 * (SERVICE_RATE_LIMIT, per client address, shared through Redis). A delivery id seen again
 * within its replay window is answered without a second run, across every receiver. Bodies are
 * read up to 1 MiB, less when SERVICE_MAX_STATE_BYTES could not hold that in a run's state, so
 * that a delivery it accepts starts its run. SIGTERM drains deliveries in flight, then exits 0.
 */
const serviceConfig = loadConfigOrExit();
const webhooks = exitOnConfigError(() => loadWebhooksConfig(process.env, serviceConfig.SERVICE_MAX_STATE_BYTES));
const composition = await bootProcess({
  config: serviceConfig,
  role: 'webhooks',
  // In memory mode the runs would live and die in this process, unseen by the API.
  needsRedis: 'The webhook receiver needs REDIS_URL, shared with the API and the workers that execute its runs.',
});
const { config, logger, agents, backend, metrics } = composition;
for (const route of webhooks.routes) {
  if (!agents.get(route.agentId)) {
    logger.fatal({ route }, `WEBHOOK_ROUTES names agent "${route.agentId}", which is not registered.`);
    process.exit(1);
  }
}
// Open: like an API without authentication, only the names of this machine and
// SERVICE_ALLOWED_HOSTS, and no page of a browser (senders send no Origin).
const open = webhooks.secret === '' && webhooks.signatureScheme === 'none';
const hosts = allowedHosts(config.SERVICE_ALLOWED_HOSTS, open);
const receiver = configuredReceiver(webhooks, composition.runs, logger, backend.deduplicator);
const lifecycle: Lifecycle = { draining: false };
const limit = config.rateLimit && globalRateLimit(backend.limiters({ name: 'global', ...config.rateLimit }), metrics.rateLimited);
const app = serviceApp(composition, lifecycle, [...(limit ? [limit] : []), receiver.middleware()], {
  hosts,
  hostsVariable: 'SERVICE_ALLOWED_HOSTS',
  ...(open ? { origins: () => false, originsVariable: 'webhook senders send no Origin' } : {}),
});
const listening = await listen(app, { port: webhooks.port, host: webhooks.host });
logger.info(
  {
    url: listening.url,
    signature: webhooks.signatureScheme,
    secret: webhooks.secret !== '',
    routes: webhooks.routes,
    max_body_bytes: webhooks.maxBodyBytes,
  },
  'agentplane webhook receiver listening on /webhook',
);
if (open) logger.warn(openAccessLine('WEBHOOK_INSECURE=true', hostPort(webhooks.host, listening.port), hosts) + '; the receiver checks neither a secret nor a signature: whoever calls it starts runs');
shutdownOnSignals(composition, { server: listening.server, lifecycle }, {
  delayMs: config.SERVICE_SHUTDOWN_DELAY_MS,
  timeoutMs: config.SERVICE_SHUTDOWN_TIMEOUT_MS,
  closeFirst: () => receiver.close(),
});
