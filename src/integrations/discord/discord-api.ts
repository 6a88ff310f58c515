import { callPlatform, PlatformError, retryAfterHeaderMs, type PlatformRequest, type PlatformResponse } from '../shared/platform-request.js';

export interface DiscordApiOptions {
  botToken: string;
  /** @defaultValue 'https://discord.com/api/v10' */
  apiBaseUrl?: string;
  timeoutMs: number;
  fetch: typeof fetch;
}

/** The few Discord API calls the adapter makes; each retries after a 429 as Discord asks. */
export class DiscordApi {
  private readonly baseUrl: string;

  constructor(private readonly options: DiscordApiOptions) {
    this.baseUrl = (options.apiBaseUrl ?? 'https://discord.com/api/v10').replace(/\/+$/, '');
  }

  /** Posts `content` to a channel as the bot, with mentions disabled so a reply cannot ping @everyone. */
  async createMessage(channelId: string, content: string): Promise<void> {
    await this.send({
      label: 'Discord create message',
      method: 'POST',
      url: `${this.baseUrl}/channels/${encodeURIComponent(channelId)}/messages`,
      headers: { Authorization: `Bot ${this.options.botToken}` },
      json: { content, allowed_mentions: { parse: [] } },
    });
  }

  /** Replaces the deferred "thinking…" response of an interaction with `content`. */
  async editOriginal(applicationId: string, interactionToken: string, content: string): Promise<void> {
    await this.send({ label: 'Discord edit original response', method: 'PATCH', url: this.originalUrl(applicationId, interactionToken), json: { content } });
  }

  /** Removes the deferred "thinking…" response once the reply stands in the channel. */
  async deleteOriginal(applicationId: string, interactionToken: string): Promise<void> {
    await this.send({ label: 'Discord delete original response', method: 'DELETE', url: this.originalUrl(applicationId, interactionToken) });
  }

  /** Interaction webhooks are authorised by the interaction token in the path, not the bot token. */
  private originalUrl(applicationId: string, interactionToken: string): string {
    return `${this.baseUrl}/webhooks/${encodeURIComponent(applicationId)}/${encodeURIComponent(interactionToken)}/messages/@original`;
  }

  private async send(request: PlatformRequest): Promise<void> {
    const response = await callPlatform(request, { fetch: this.options.fetch, timeoutMs: this.options.timeoutMs, retryAfterMs });
    if (response.status >= 200 && response.status < 300) return;
    const body = response.body as { message?: unknown; code?: unknown } | null;
    const code = typeof body?.code === 'number' || typeof body?.code === 'string' ? body.code : undefined;
    throw new PlatformError(request.label, response.status, code, typeof body?.message === 'string' ? body.message : 'no message');
  }
}

/** Discord puts the wait, in seconds with a fraction, in the body's `retry_after`. */
function retryAfterMs(response: PlatformResponse): number | undefined {
  if (response.status !== 429) return undefined;
  const seconds = (response.body as { retry_after?: unknown } | null)?.retry_after;
  return typeof seconds === 'number' && seconds >= 0 ? seconds * 1000 : retryAfterHeaderMs(response.headers) ?? 1000;
}
