import { callPlatform, PlatformError, retryAfterHeaderMs, type PlatformResponse } from '../shared/platform-request.js';

export interface SlackApiOptions {
  botToken: string;
  /** @defaultValue 'https://slack.com/api' */
  apiBaseUrl?: string;
  timeoutMs: number;
  fetch: typeof fetch;
}

/** The Slack Web API call the adapter makes. */
export class SlackApi {
  private readonly baseUrl: string;

  constructor(private readonly options: SlackApiOptions) {
    this.baseUrl = (options.apiBaseUrl ?? 'https://slack.com/api').replace(/\/+$/, '');
  }

  /**
   * chat.postMessage as the bot, in the thread `threadTs` when given. Slack answers 200 even
   * when it refuses; `{ok:false,error}` becomes a {@link PlatformError} carrying Slack's code.
   * A 429 is retried after its Retry-After.
   */
  async postMessage(channel: string, text: string, threadTs?: string): Promise<void> {
    const label = 'Slack chat.postMessage';
    const response = await callPlatform(
      {
        label,
        method: 'POST',
        url: `${this.baseUrl}/chat.postMessage`,
        headers: { Authorization: `Bearer ${this.options.botToken}` },
        json: { channel, text, ...(threadTs === undefined ? {} : { thread_ts: threadTs }) },
      },
      { fetch: this.options.fetch, timeoutMs: this.options.timeoutMs, retryAfterMs },
    );
    const body = response.body as { ok?: unknown; error?: unknown } | null;
    if (response.status === 200 && body?.ok === true) return;
    const code = typeof body?.error === 'string' ? body.error : undefined;
    throw new PlatformError(label, response.status, code, code ?? 'no error code');
  }
}

function retryAfterMs(response: PlatformResponse): number | undefined {
  return response.status === 429 ? retryAfterHeaderMs(response.headers) ?? 1000 : undefined;
}
