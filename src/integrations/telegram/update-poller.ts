import type { Logger } from 'pino';
import { abortableSleep } from '../shared/abortable-sleep.js';
import { BackgroundLoop } from '../shared/background-loop.js';
import { TelegramApiError, type TelegramApi } from './telegram-api.js';
import type { TelegramUpdate } from './telegram-types.js';

export interface UpdatePollerOptions {
  api: TelegramApi;
  /** Long-poll timeout Telegram holds a getUpdates call open for. */
  pollTimeoutSec: number;
  /** Extra time allowed for a getUpdates answer beyond the long-poll timeout. */
  requestTimeoutMs: number;
  /** First wait after a failed call; doubles per consecutive failure. */
  retryInitialMs: number;
  retryMaxMs: number;
  allowedUpdates: readonly string[];
  logger: Logger;
  /**
   * Called for each new update, in update_id order. A promise is waited for before the next
   * update, and the offset moves past an update only once it resolves: a rejection is a failed
   * poll (backed off, that update polled again), so no update is confirmed before it is handled.
   */
  deliver(update: TelegramUpdate): void | Promise<void>;
}

/**
 * The getUpdates long-polling loop. Telegram forgets an update once getUpdates is called with
 * a higher offset, so the loop keeps the next offset and, on stop, confirms what it delivered:
 * a later start, in this process or another, neither loses nor repeats an update.
 */
export class UpdatePoller {
  private offset = 0;
  /** The offset Telegram last saw, i.e. everything below it is confirmed. */
  private confirmed = 0;
  private readonly running = new BackgroundLoop(async (signal) => {
    await this.loop(signal);
    await this.confirmDelivered();
  });

  constructor(private readonly options: UpdatePollerOptions) {}

  /** Starts polling; does nothing while already polling. */
  start(): void {
    this.running.start();
  }

  /** Ends the loop at once (the pending getUpdates is aborted) and confirms delivered updates; idempotent. */
  stop(): Promise<void> {
    return this.running.stop();
  }

  private async loop(signal: AbortSignal): Promise<void> {
    let retryMs = this.options.retryInitialMs;
    while (!signal.aborted) {
      const sent = this.offset;
      try {
        const updates = await this.options.api.call<TelegramUpdate[]>(
          'getUpdates',
          { offset: sent, timeout: this.options.pollTimeoutSec, allowed_updates: this.options.allowedUpdates },
          { signal, timeoutMs: this.options.pollTimeoutSec * 1000 + this.options.requestTimeoutMs, maxAttempts: 1 },
        );
        this.confirmed = Math.max(this.confirmed, sent);
        retryMs = this.options.retryInitialMs;
        for (const update of updates) {
          if (update.update_id < this.offset) continue;
          await this.options.deliver(update);
          this.offset = update.update_id + 1;
        }
      } catch (error) {
        if (signal.aborted) return;
        const waitMs = this.reportFailure(error, retryMs);
        retryMs = Math.min(retryMs * 2, this.options.retryMaxMs);
        await abortableSleep(waitMs, signal);
      }
    }
  }

  /** Logs a failed getUpdates and returns how long to wait before the next one. */
  private reportFailure(error: unknown, backoffMs: number): number {
    const { logger } = this.options;
    if (error instanceof TelegramApiError && error.retryAfterMs !== undefined) {
      logger.warn({ err: error, waitMs: error.retryAfterMs }, 'Telegram getUpdates rate limited; waiting retry_after');
      return error.retryAfterMs;
    }
    if (error instanceof TelegramApiError && error.status === 409) {
      logger.error(
        { err: error, waitMs: backoffMs },
        'Telegram getUpdates conflict (409): another process is polling with this bot token, or a webhook is set ' +
          '(push mode and polling exclude each other; call deleteWebhook to poll). Retrying.',
      );
      return backoffMs;
    }
    logger.warn({ err: error, waitMs: backoffMs }, 'Telegram getUpdates failed; backing off');
    return backoffMs;
  }

  /** A getUpdates with the next offset and no wait makes Telegram drop what was delivered. */
  private async confirmDelivered(): Promise<void> {
    if (this.offset <= this.confirmed) return;
    try {
      await this.options.api.call('getUpdates', { offset: this.offset, timeout: 0, limit: 1 }, { maxAttempts: 1 });
      this.confirmed = this.offset;
    } catch (error) {
      this.options.logger.warn({ err: error }, 'Telegram did not confirm the last delivered updates; they may be delivered again');
    }
  }
}
