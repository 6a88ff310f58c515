import type { Middleware } from 'koa';
import { ConfigError } from '../../config.js';
import type { ChatConfig } from './config.js';
import { GatewayCore, type GatewayDeps } from './gateway-core.js';
import { chain, type ChatPlatform } from './platform.js';
import { DiscordChat } from './discord-chat.js';
import { SlackChat } from './slack-chat.js';
import { TelegramChat } from './telegram-chat.js';

/** The chat gateway of a process: its platforms' endpoints, and its following of run events. */
export interface ChatGateway {
  readonly platforms: readonly ChatPlatform[];
  /** Serves `/slack/*`, `/discord/interactions`, `/telegram/webhook` (in webhook mode) of the configured platforms. */
  middleware(): Middleware;
  /** Stops polling Telegram, stops following events and waits for the posts and edits under way. */
  close(): Promise<void>;
}

/**
 * Builds and starts the gateway of `config` (see {@link loadChatConfig}). `knows` tells whether
 * an agent or graph id exists: an unknown `<PLATFORM>_AGENT` is a {@link ConfigError} naming it.
 * Resolves once the run events are followed, so no approval asked after it is missed; Telegram
 * in polling mode polls from then on (in one replica: the holder of the poller lease).
 */
export async function startChatGateway(config: ChatConfig, deps: GatewayDeps, knows: (agentId: string) => boolean): Promise<ChatGateway> {
  for (const [prefix, platform] of [['SLACK', config.slack], ['DISCORD', config.discord], ['TELEGRAM', config.telegram]] as const) {
    if (platform?.agent !== undefined && !knows(platform.agent)) throw new ConfigError(`${prefix}_AGENT`, `"${platform.agent}" is no registered agent or graph`);
  }
  const core = new GatewayCore(deps);
  const platforms: ChatPlatform[] = [];
  if (config.slack) platforms.push(new SlackChat(config.slack, core, deps.logger));
  if (config.discord) platforms.push(new DiscordChat(config.discord, core, deps.logger));
  if (config.telegram) platforms.push(new TelegramChat(config.telegram, core, deps.logger, deps.store.leases));
  for (const platform of platforms) core.add(platform);
  await core.start();
  deps.logger.info({ platforms: platforms.map((p) => p.name) }, 'chat gateway started');
  const endpoints = chain(platforms.map((platform) => platform.middleware()));
  return { platforms, middleware: () => endpoints, close: () => core.close() };
}
