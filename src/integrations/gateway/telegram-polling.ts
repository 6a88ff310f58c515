import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { LeaseStore } from '../../ports/store.js';
import { abortableSleep } from '../shared/abortable-sleep.js';
import { BackgroundLoop } from '../shared/background-loop.js';
import type { TelegramApi } from '../telegram/telegram-api.js';
import type { TelegramUpdate } from '../telegram/telegram-types.js';
import { UpdatePoller } from '../telegram/update-poller.js';

/** How long the poller's lease lasts unless renewed: how long a crashed poller's successor waits at most. */
const LEASE_MS = 30_000;
/** The holder renews its lease this often, well within {@link LEASE_MS}. */
const RENEW_EVERY_MS = 5_000;
/** A replica without the lease tries to take it this often (one Redis command): how soon it follows a poller that stopped. */
const STANDBY_EVERY_MS = 1_000;
/** Telegram holds a getUpdates call open this long when it has nothing to deliver. */
const POLL_TIMEOUT_SEC = 25;

export interface LeasedPollingOptions {
  api: TelegramApi;
  leases: LeaseStore;
  botToken: string;
  /** Handles one update; resolves once it is handled. A rejection leaves it unconfirmed: polled again after a back-off. */
  handle(update: TelegramUpdate): Promise<void>;
  logger: Logger;
}

/**
 * Telegram long polling for the chat gateway, by one process at a time across every replica on
 * the backend: the holder of a lease (one per bot) polls getUpdates; the others try to take the
 * lease every second, so one of them polls once the holder stops (it lets the lease go) or
 * dies (the lease lapses after 30 s). An update is confirmed to Telegram (a getUpdates with an
 * offset past it) only once it is handled, so a poller that stops or dies loses nothing; an
 * update handled and not yet confirmed comes to the next poller again, and the gateway's claim
 * of each update_id makes that a no-op. Taking the lease, the process deletes the bot's webhook
 * first (Telegram refuses getUpdates while one is set).
 */
export class LeasedTelegramPolling {
  private readonly poller: UpdatePoller;
  private readonly leaseName: string;
  /** This process's claim on the lease: its host and pid for whoever looks, and unique among pollers in one process. */
  private readonly holder = `${hostname()}:${process.pid}:${randomUUID()}`;
  private readonly running = new BackgroundLoop((signal) => this.loop(signal));

  constructor(private readonly options: LeasedPollingOptions) {
    // The token is a secret: the lease is named by its digest.
    this.leaseName = `telegram-poller:${createHash('sha256').update(options.botToken).digest('base64url').slice(0, 22)}`;
    this.poller = new UpdatePoller({
      api: options.api,
      pollTimeoutSec: POLL_TIMEOUT_SEC,
      requestTimeoutMs: 10_000,
      retryInitialMs: 1_000,
      retryMaxMs: 30_000,
      allowedUpdates: ['message', 'callback_query'],
      logger: options.logger,
      deliver: (update) => options.handle(update),
    });
  }

  /** Starts trying for the lease (and polling once this process has it); does nothing while started. */
  start(): void {
    this.running.start();
  }

  /** Stops polling (the update under way is handled, what was handled is confirmed) and lets the lease go; idempotent. */
  stop(): Promise<void> {
    return this.running.stop();
  }

  private async loop(signal: AbortSignal): Promise<void> {
    let polling = false;
    while (!signal.aborted) {
      const held = await this.holdLease();
      if (held && !polling) await this.startPolling();
      if (!held && polling) await this.stopPolling('another process took the Telegram poller lease: polling stopped');
      polling = held;
      await abortableSleep(held ? RENEW_EVERY_MS : STANDBY_EVERY_MS, signal);
    }
    if (polling) await this.stopPolling('Telegram polling stopped');
    await this.options.leases.drop(this.leaseName, this.holder).catch((error: unknown) => {
      this.options.logger.warn({ err: error }, 'the Telegram poller lease was not let go: another process polls once it lapses');
    });
  }

  /** Takes or renews the lease; a failure to reach the backend counts as not holding it (the lease may lapse meanwhile). */
  private async holdLease(): Promise<boolean> {
    try {
      return await this.options.leases.hold(this.leaseName, this.holder, LEASE_MS);
    } catch (error) {
      this.options.logger.warn({ err: error }, 'the Telegram poller lease could not be taken or renewed');
      return false;
    }
  }

  private async startPolling(): Promise<void> {
    await this.options.api.call('deleteWebhook', { drop_pending_updates: false }).catch((error: unknown) => {
      this.options.logger.warn({ err: error }, 'Telegram deleteWebhook failed; getUpdates is refused while a webhook is set');
    });
    this.poller.start();
    this.options.logger.info({ holder: this.holder }, 'this process polls Telegram (it holds the poller lease)');
  }

  private async stopPolling(message: string): Promise<void> {
    await this.poller.stop();
    this.options.logger.info({ holder: this.holder }, message);
  }
}
