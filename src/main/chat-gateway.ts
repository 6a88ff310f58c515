import { chatEnabled, type ChatConfig } from '../integrations/gateway/config.js';
import { startChatGateway, type ChatGateway } from '../integrations/gateway/gateway.js';
import type { Composition } from './compose.js';

/**
 * The chat gateway of an API process on its composition, for `createApiServer`'s `endpoints`
 * (`/slack/*`, `/discord/interactions`, `/telegram/webhook`, verified by each platform's own
 * signature rather than by the API's authentication); it follows the run events that post and
 * edit its messages. On Redis every API replica runs one: any replica takes the platform's
 * requests, and claims in the backend make each post and edit once. Undefined when no platform
 * is set; throws ConfigError for an agent that is not registered.
 */
export async function startConfiguredGateway(composition: Composition, config: ChatConfig): Promise<ChatGateway | undefined> {
  if (!chatEnabled(config)) return undefined;
  const { backend, logger } = composition;
  return startChatGateway(
    config,
    { runs: composition.runs, store: backend.store, events: backend.events, deduplicator: backend.deduplicator, logger },
    (agentId) => composition.agents.get(agentId) !== undefined,
  );
}
