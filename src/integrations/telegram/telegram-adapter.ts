import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import { badRequest } from '../../domain/errors.js';
import { constantTimeEqual } from '../shared/constant-time-equal.js';
import { InFlight } from '../shared/in-flight.js';
import { postEndpoint } from '../shared/post-endpoint.js';
import { parseJsonBody } from '../shared/read-raw-body.js';
import { unauthorized } from '../shared/respond-error.js';
import { silentLogger } from '../shared/silent-logger.js';
import { escapeMarkdown } from './escape-markdown.js';
import { TelegramApi } from './telegram-api.js';
import {
  HANDLED_UPDATE_KINDS,
  type InlineButton,
  type TelegramCallbackQuery,
  type TelegramMessage,
  type TelegramUpdate,
} from './telegram-types.js';
import { UpdatePoller } from './update-poller.js';

/** What the handler is given for a text message. */
export interface TelegramText {
  chatID: number;
  userID: number;
  text: string;
}

/** Answers a text message; a non-empty text is sent back to the chat. */
export type TelegramHandler = (message: TelegramText) => string | Promise<string>;

/** Handles a press on an inline keyboard button; it should call answerCallbackQuery. */
export type CallbackQueryHandler = (query: TelegramCallbackQuery) => void | Promise<void>;

export interface TelegramAdapterOptions {
  botToken: string;
  handler: TelegramHandler;
  /** @defaultValue 'https://api.telegram.org' */
  apiBaseUrl?: string;
  /** Long-poll timeout of getUpdates. @defaultValue 30 */
  pollTimeoutSec?: number;
  /** First wait after a failed getUpdates, doubled per failure. @defaultValue 1000 */
  retryInitialMs?: number;
  /** @defaultValue 30000 */
  retryMaxMs?: number;
  /** Push mode: when set, pushed updates must carry it in X-Telegram-Bot-Api-Secret-Token (else 401). */
  secretToken?: string;
  /** Push mode path. @defaultValue '/telegram/webhook' */
  path?: string;
  /** Upper bound of one outbound call (getUpdates gets the poll timeout on top). @defaultValue 10000 */
  requestTimeoutMs?: number;
  /** @defaultValue global fetch */
  fetch?: typeof fetch;
  /** @defaultValue a silent logger */
  logger?: Logger;
}

/**
 * Telegram bot adapter. Updates arrive by long polling (`start()` / `stop()`) or pushed to
 * `middleware()`; each text message is handed to the handler in update order, in the
 * background, and a non-empty reply is sent with sendMessage (parse_mode Markdown, text
 * escaped). Button presses go to the callback query handler. `stop()` ends polling, makes the
 * push endpoint answer 503 until the next `start()`, and waits for running handlers.
 */
export class TelegramAdapter {
  private readonly api: TelegramApi;
  private readonly logger: Logger;
  private readonly tasks: InFlight;
  private readonly poller: UpdatePoller;
  private readonly endpoint: Middleware;
  private callbackHandler: CallbackQueryHandler | undefined;
  private stopping: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: TelegramAdapterOptions) {
    if (options.botToken === '') throw new TypeError('TelegramAdapter needs a bot token');
    this.logger = options.logger ?? silentLogger();
    const requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    this.api = new TelegramApi({
      botToken: options.botToken,
      apiBaseUrl: options.apiBaseUrl,
      timeoutMs: requestTimeoutMs,
      fetch: options.fetch ?? fetch,
    });
    this.tasks = new InFlight((error) => this.logger.error({ err: error }, 'Telegram task failed'));
    this.poller = new UpdatePoller({
      api: this.api,
      pollTimeoutSec: options.pollTimeoutSec ?? 30,
      requestTimeoutMs,
      retryInitialMs: options.retryInitialMs ?? 1000,
      retryMaxMs: options.retryMaxMs ?? 30_000,
      allowedUpdates: HANDLED_UPDATE_KINDS,
      logger: this.logger,
      deliver: (update) => this.deliver(update),
    });
    this.endpoint = postEndpoint({
      path: options.path ?? '/telegram/webhook',
      name: 'Telegram adapter',
      stopped: () => this.stopping !== undefined,
      authorize: (ctx) => this.checkSecretToken(ctx),
      handle: (ctx, body) => this.receive(ctx, body),
      // Tracing on: each delivery continues the sender's traceparent; the handler's work sits under it.
      span: 'telegram update',
    });
  }

  /** Routes button presses (callback queries) to `handler`. */
  onCallbackQuery(handler: CallbackQueryHandler): this {
    this.callbackHandler = handler;
    return this;
  }

  /** Starts long polling; after `stop()` has resolved, starting again resumes where it stopped. */
  start(): void {
    if (this.stopping && !this.stopped) throw new Error('TelegramAdapter.start() was called before stop() finished');
    this.stopping = undefined;
    this.stopped = false;
    this.poller.start();
  }

  /** Ends polling within moments, then waits for running handlers and their replies; idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await this.poller.stop();
      await this.tasks.drain();
      this.stopped = true;
    })();
    return this.stopping;
  }

  /** Push mode: Koa middleware receiving the updates Telegram posts (see `setTelegramWebhook`). */
  middleware(): Middleware {
    return this.endpoint;
  }

  /** sendMessage with parse_mode Markdown; `text` is escaped, so it shows exactly as given. */
  sendMessage(chatId: number, text: string): Promise<TelegramMessage> {
    return this.api.call('sendMessage', { chat_id: chatId, text: escapeMarkdown(text), parse_mode: 'Markdown' });
  }

  /** Sends `text` with an inline keyboard of `rows` of buttons (approval prompts). */
  sendInlineKeyboard(chatId: number, text: string, rows: InlineButton[][]): Promise<TelegramMessage> {
    for (const button of rows.flat()) {
      const bytes = Buffer.byteLength(button.callbackData);
      if (bytes < 1 || bytes > 64) throw new RangeError(`Telegram callback data must be 1–64 bytes, got ${bytes}`);
    }
    const keyboard = rows.map((row) => row.map((button) => ({ text: button.text, callback_data: button.callbackData })));
    return this.api.call('sendMessage', {
      chat_id: chatId,
      text: escapeMarkdown(text),
      parse_mode: 'Markdown',
      reply_markup: { inline_keyboard: keyboard },
    });
  }

  /** Replaces a message's text (escaped, Markdown), which also removes its inline keyboard. */
  async editMessageText(chatId: number, messageId: number, text: string): Promise<void> {
    await this.api.call('editMessageText', { chat_id: chatId, message_id: messageId, text: escapeMarkdown(text), parse_mode: 'Markdown' });
  }

  /** Ends the button's loading state, showing `text` to the user who pressed it. */
  async answerCallbackQuery(callbackQueryId: string, text: string, showAlert = false): Promise<void> {
    await this.api.call('answerCallbackQuery', { callback_query_id: callbackQueryId, text, show_alert: showAlert });
  }

  private checkSecretToken(ctx: Context): void {
    const expected = this.options.secretToken;
    if (expected !== undefined && expected !== '' && !constantTimeEqual(ctx.get('X-Telegram-Bot-Api-Secret-Token'), expected)) {
      throw unauthorized('The X-Telegram-Bot-Api-Secret-Token header is missing or wrong.');
    }
  }

  private receive(ctx: Context, body: Buffer): void {
    const update = parseJsonBody(body) as Partial<TelegramUpdate> | null;
    if (typeof update?.update_id !== 'number') throw badRequest('Not a Telegram update: update_id is missing.');
    this.deliver(update as TelegramUpdate);
    ctx.body = '';
  }

  private deliver(update: TelegramUpdate): void {
    const { message, callback_query: query } = update;
    if (message?.text !== undefined && message.from !== undefined) {
      const input = { chatID: message.chat.id, userID: message.from.id, text: message.text };
      void this.tasks.run(() => this.answer(input));
    } else if (query !== undefined && this.callbackHandler !== undefined) {
      const handler = this.callbackHandler;
      void this.tasks.run(async () => handler(query));
    }
  }

  private async answer(input: TelegramText): Promise<void> {
    try {
      const reply = await this.options.handler(input);
      if (reply !== '') await this.sendMessage(input.chatID, reply);
    } catch (error) {
      this.logger.error({ err: error, chat_id: input.chatID }, 'Telegram message was not answered');
    }
  }
}
