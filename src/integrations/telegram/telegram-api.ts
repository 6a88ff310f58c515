import { callPlatform, PlatformError, type PlatformResponse } from '../shared/platform-request.js';

export interface TelegramApiOptions {
  botToken: string;
  /** Methods are called at `<base>/bot<token>/<method>`. @defaultValue 'https://api.telegram.org' */
  apiBaseUrl?: string;
  timeoutMs: number;
  fetch: typeof fetch;
}

export interface TelegramCallOptions {
  signal?: AbortSignal;
  /** @defaultValue the client's timeout */
  timeoutMs?: number;
  /** Attempts in all while Telegram answers 429; the poll loop does its own waiting. @defaultValue 4 */
  maxAttempts?: number;
}

/** Telegram refused a call: `platformCode` is its `error_code`, `retryAfterMs` its `parameters.retry_after`. */
export class TelegramApiError extends PlatformError {
  constructor(
    call: string,
    status: number,
    errorCode: number | undefined,
    description: string,
    readonly retryAfterMs: number | undefined,
  ) {
    super(call, status, errorCode, description);
    this.name = 'TelegramApiError';
  }
}

/**
 * Calls Bot API methods with a JSON body and unwraps `{ok:true,result}`. The URL holds the bot
 * token, so it never appears in an error or a log.
 */
export class TelegramApi {
  private readonly baseUrl: string;

  constructor(private readonly options: TelegramApiOptions) {
    this.baseUrl = (options.apiBaseUrl ?? 'https://api.telegram.org').replace(/\/+$/, '');
  }

  async call<T>(method: string, params: Record<string, unknown>, options: TelegramCallOptions = {}): Promise<T> {
    const label = `Telegram ${method}`;
    const response = await callPlatform(
      { label, method: 'POST', url: `${this.baseUrl}/bot${this.options.botToken}/${method}`, json: params },
      {
        fetch: this.options.fetch,
        timeoutMs: options.timeoutMs ?? this.options.timeoutMs,
        signal: options.signal,
        maxAttempts: options.maxAttempts,
        retryAfterMs,
      },
    );
    const body = response.body as TelegramAnswer | null;
    if (body?.ok === true) return body.result as T;
    throw new TelegramApiError(
      label,
      response.status,
      typeof body?.error_code === 'number' ? body.error_code : undefined,
      typeof body?.description === 'string' ? body.description : 'no description',
      retryAfterMs(response),
    );
  }
}

interface TelegramAnswer {
  ok?: unknown;
  result?: unknown;
  error_code?: unknown;
  description?: unknown;
  parameters?: { retry_after?: unknown };
}

function retryAfterMs(response: PlatformResponse): number | undefined {
  const seconds = (response.body as TelegramAnswer | null)?.parameters?.retry_after;
  return response.status === 429 && typeof seconds === 'number' && seconds >= 0 ? seconds * 1000 : undefined;
}
