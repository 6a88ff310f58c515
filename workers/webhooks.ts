import { createServer } from 'node:http';
import Koa from 'koa';
import { ConfigError, loadConfigOrExit } from '../src/config.js';
import type { Lifecycle } from '../src/http/deps.js';
import { loadWebhooksConfig, type WebhooksConfig } from '../src/integrations/webhook/config.js';
import { configuredReceiver } from '../src/integrations/webhook/configured-receiver.js';
import { createBackend } from '../src/main/backend.js';
import { createLogger } from '../src/main/logger.js';
import { createShutdown, onTerminationSignals } from '../src/main/shutdown.js';
import { loadAgents } from '../src/runtime/registry.js';
import { createRunControl } from '../src/runtime/run-control.js';

/**
 * `npm run start:webhooks`: the webhook receiver on WEBHOOK_PORT. Each delivery whose type has
 * a route in WEBHOOK_ROUTES starts a run of the route's agent; the run is queued on Redis for
 * the workers, exactly like POST /api/runs. SIGTERM drains deliveries in flight, then exits 0.
 */
const config = loadConfigOrExit();
const webhooks = loadWebhooksConfigOrExit();
const logger = createLogger(config.LOG_LEVEL);
if (!config.REDIS_URL) {
  // In memory mode the runs would live and die in this process, unseen by the API.
  logger.fatal('The webhook receiver needs REDIS_URL, shared with the API and the workers that execute its runs.');
  process.exit(1);
}
const agents = await loadAgents(config.AGENTS_MODULE);
for (const route of webhooks.routes) {
  if (!agents.get(route.agentId)) {
    logger.fatal({ route }, `WEBHOOK_ROUTES names agent "${route.agentId}", which is not registered.`);
    process.exit(1);
  }
}
const backend = createBackend(config, logger);
const runControl = createRunControl({ store: backend.store, queue: backend.queue, events: backend.events, agents });
const receiver = configuredReceiver(webhooks, runControl, logger);
const app = new Koa();
app.use(receiver.middleware());
const server = createServer(app.callback());
await new Promise<void>((resolve, reject) => {
  server.once('error', reject);
  server.listen(webhooks.port, webhooks.host, resolve);
});
logger.info(
  { host: webhooks.host, port: webhooks.port, signature: webhooks.signatureScheme, secret: webhooks.secret !== '', routes: webhooks.routes },
  'agentplane webhook receiver listening on /webhook',
);
const lifecycle: Lifecycle = { draining: false };
process.on('unhandledRejection', (error) => logger.error({ err: error }, 'unhandled rejection'));
onTerminationSignals(
  createShutdown({
    server,
    lifecycle,
    logger,
    delayMs: config.SERVICE_SHUTDOWN_DELAY_MS,
    timeoutMs: config.SERVICE_SHUTDOWN_TIMEOUT_MS,
    close: async () => {
      await receiver.close();
      await backend.close();
    },
  }),
);

function loadWebhooksConfigOrExit(): WebhooksConfig {
  try {
    return loadWebhooksConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}
