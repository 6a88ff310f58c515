/**
 * `agentplane/integrations`: the inbound webhook receiver and the Discord, Slack and Telegram
 * adapters, each mountable on any Koa app (`middleware()`) or served on its own port. Bridges
 * that start or resume runs take the `runs` of an embedded agentplane (`createAgentplane`).
 */
export { WebhookReceiver, WILDCARD } from './webhook/webhook-receiver.js';
export type { WebhookEvent, WebhookHandler, WebhookReceiverOptions } from './webhook/webhook-receiver.js';
export { runBridge } from './webhook/run-bridge.js';
export type { RunBridgeOptions } from './webhook/run-bridge.js';
export { githubSignature } from './webhook/github-signature.js';
export { standardWebhooksSignature } from './webhook/standard-webhooks-signature.js';
export type { SignatureCheck, SignatureVerifier, TimestampToleranceOptions } from './shared/signature-verifier.js';
/** Where a receiver remembers delivery ids: `MemoryDeduplicator`, or an embedded agentplane's `composition.backend.deduplicator` (shared through Redis). */
export { MemoryDeduplicator } from '../adapters/memory/deduplicator.js';
export type { Deduplicator } from '../ports/deduplicator.js';

export { DiscordAdapter, DISCORD_FAILURE_TEXT } from './discord/discord-adapter.js';
export type { DiscordAdapterOptions, DiscordCommand, DiscordHandler } from './discord/discord-adapter.js';
export { discordSignature } from './discord/discord-signature.js';

export { SlackAdapter } from './slack/slack-adapter.js';
export type { SlackAdapterOptions, SlackHandler, SlackMessage } from './slack/slack-adapter.js';
export { slackSignature } from './slack/slack-signature.js';

export { TelegramAdapter } from './telegram/telegram-adapter.js';
export type { CallbackQueryHandler, TelegramAdapterOptions, TelegramHandler, TelegramText } from './telegram/telegram-adapter.js';
export { TelegramApprovalBridge, ALREADY_DECIDED_TEXT } from './telegram/telegram-approval-bridge.js';
export type { TelegramApprovalBridgeOptions } from './telegram/telegram-approval-bridge.js';
export { setTelegramWebhook } from './telegram/set-telegram-webhook.js';
export type { SetTelegramWebhookOptions } from './telegram/set-telegram-webhook.js';
export { TelegramApiError } from './telegram/telegram-api.js';
export type { TelegramCallbackQuery, TelegramChat, TelegramMessage, TelegramUpdate, TelegramUser } from './telegram/telegram-types.js';
