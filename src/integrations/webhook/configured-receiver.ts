import type { Logger } from 'pino';
import type { Deduplicator } from '../../ports/deduplicator.js';
import type { RunControl } from '../../ports/run-control.js';
import type { WebhooksConfig } from './config.js';
import { runBridge } from './run-bridge.js';
import { WebhookReceiver } from './webhook-receiver.js';

/**
 * The receiver `npm run start:webhooks` serves: the configured secret, signature scheme and
 * body limit (what the runs' state can hold), and for each route a run bridge starting its agent in the configured tenant; delivery ids are
 * remembered in `deduplicator` (the backend's, shared by every receiver on Redis).
 */
export function configuredReceiver(
  config: WebhooksConfig,
  runControl: RunControl,
  logger: Logger,
  deduplicator?: Deduplicator,
): WebhookReceiver {
  const receiver = new WebhookReceiver({
    secret: config.secret,
    signature: config.signature,
    maxBodyBytes: config.maxBodyBytes,
    logger,
    deduplicator,
  });
  for (const route of config.routes) {
    receiver.on(route.type, runBridge({ runControl, tenant: config.tenant, agentId: route.agentId, logger }));
  }
  return receiver;
}
