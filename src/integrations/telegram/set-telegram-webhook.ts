import { TelegramApi } from './telegram-api.js';
import { HANDLED_UPDATE_KINDS } from './telegram-types.js';

export interface SetTelegramWebhookOptions {
  botToken: string;
  /** Public HTTPS URL of the push endpoint (the adapter's `middleware()` path). */
  url: string;
  /** Sent back by Telegram in X-Telegram-Bot-Api-Secret-Token; give the adapter the same value. */
  secretToken?: string;
  /** @defaultValue 'https://api.telegram.org' */
  apiBaseUrl?: string;
  /** @defaultValue 10000 */
  requestTimeoutMs?: number;
  /** @defaultValue global fetch */
  fetch?: typeof fetch;
}

/**
 * Registers the push endpoint with Telegram (setWebhook), for updates of the kinds the adapter
 * handles. Polling and push exclude each other: while a webhook is set, getUpdates answers 409.
 */
export async function setTelegramWebhook(options: SetTelegramWebhookOptions): Promise<void> {
  const api = new TelegramApi({
    botToken: options.botToken,
    apiBaseUrl: options.apiBaseUrl,
    timeoutMs: options.requestTimeoutMs ?? 10_000,
    fetch: options.fetch ?? fetch,
  });
  await api.call('setWebhook', {
    url: options.url,
    allowed_updates: HANDLED_UPDATE_KINDS,
    ...(options.secretToken === undefined ? {} : { secret_token: options.secretToken }),
  });
}
