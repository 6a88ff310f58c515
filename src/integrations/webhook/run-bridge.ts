import type { Logger } from 'pino';
import type { JsonObject } from '../../domain/types.js';
import type { RunControl } from '../../ports/run-control.js';
import { silentLogger } from '../shared/silent-logger.js';
import type { WebhookHandler } from './webhook-receiver.js';

export interface RunBridgeOptions {
  runControl: RunControl;
  /** Tenant the runs belong to. */
  tenant: string;
  /** Agent started for each delivery. */
  agentId: string;
  /** @defaultValue a silent logger */
  logger?: Logger;
}

/**
 * A webhook handler that starts a run of `agentId` on a new session for each delivery, with
 * input `{webhook: {type, source, payload}}`. Starting is all it waits for: the run executes
 * on a worker. A refusal (`unknown_agent`) fails the handler, so the sender gets a 500 and can
 * redeliver; a full queue (the tenant's queued cap) is `rate_limited`, which the receiver
 * answers 429 with Retry-After; an input that would pass the state limit is `payload_too_large`,
 * which the receiver answers 413 (a redelivery would fail the same way). Nothing is written then.
 */
export function runBridge(options: RunBridgeOptions): WebhookHandler {
  const logger = options.logger ?? silentLogger();
  return async (event) => {
    const webhook: JsonObject = { type: event.type, source: event.source, payload: event.payload };
    const ticket = await options.runControl.startRun(options.tenant, { agent_id: options.agentId, input: { webhook } });
    logger.info({ type: event.type, agent_id: options.agentId, run_id: ticket.run_id, session_id: ticket.session_id }, 'webhook started a run');
  };
}
