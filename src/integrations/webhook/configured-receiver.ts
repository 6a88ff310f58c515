import type { Logger } from 'pino';
import type { RunControl } from '../../ports/run-control.js';
import type { WebhooksConfig } from './config.js';
import { runBridge } from './run-bridge.js';
import { WebhookReceiver } from './webhook-receiver.js';

/**
 * The receiver `npm run start:webhooks` serves: the configured secret and signature scheme,
 * and for each route a run bridge starting its agent in the configured tenant.
 */
export function configuredReceiver(config: WebhooksConfig, runControl: RunControl, logger: Logger): WebhookReceiver {
  const receiver = new WebhookReceiver({ secret: config.secret, signature: config.signature, logger });
  for (const route of config.routes) {
    receiver.on(route.type, runBridge({ runControl, tenant: config.tenant, agentId: route.agentId, logger }));
  }
  return receiver;
}
