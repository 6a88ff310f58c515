import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import { badRequest, isAppError } from '../../domain/errors.js';
import type { Approval } from '../../domain/types.js';
import type { LeaseStore } from '../../ports/store.js';
import { constantTimeEqual } from '../shared/constant-time-equal.js';
import { postEndpoint } from '../shared/post-endpoint.js';
import { parseJsonBody } from '../shared/read-raw-body.js';
import { unauthorized } from '../shared/respond-error.js';
import { approvalButtonData, parseApprovalButton } from '../telegram/approval-button.js';
import { TelegramApi } from '../telegram/telegram-api.js';
import type { TelegramMessage, TelegramUpdate } from '../telegram/telegram-types.js';
import type { TelegramChatConfig } from './config.js';
import { PRESS_REFUSALS, type GatewayCore } from './gateway-core.js';
import type { ChatPlatform, MessageRef, Place } from './platform.js';
import { LeasedTelegramPolling } from './telegram-polling.js';
import { approvalLines, outcomeLine, platformUser } from './render.js';

/** Telegram's limit of a message's text. */
const MAX_TEXT = 4096;

/**
 * Telegram in the chat gateway. TELEGRAM_MODE `webhook`: updates are pushed at
 * `POST /telegram/webhook` (register it with setWebhook and TELEGRAM_SECRET_TOKEN; a request
 * without that token in X-Telegram-Bot-Api-Secret-Token is 401 and its body is not read).
 * `polling`: one replica polls getUpdates ({@link LeasedTelegramPolling}) and no route is served.
 * A person's text message starts or continues the session of its chat, answered there; an
 * inline keyboard press is decided for TELEGRAM_APPROVERS (Telegram user ids) and answered with
 * answerCallbackQuery, and the message is edited (editMessageText) once the decision is heard.
 * Each update_id is handled once, whatever replica Telegram retries (or a new poller polls) it on.
 */
export class TelegramChat implements ChatPlatform {
  readonly name = 'telegram' as const;
  private readonly api: TelegramApi;
  private readonly endpoint: Middleware;
  private readonly polling: LeasedTelegramPolling | undefined;

  constructor(
    readonly config: TelegramChatConfig,
    private readonly core: GatewayCore,
    private readonly logger: Logger,
    leases: LeaseStore,
  ) {
    this.api = new TelegramApi({ botToken: config.botToken, apiBaseUrl: config.apiUrl, timeoutMs: 10_000, fetch });
    if (config.mode === 'polling') {
      this.polling = new LeasedTelegramPolling({ api: this.api, leases, botToken: config.botToken, logger, handle: (update) => this.polled(update) });
      this.endpoint = (_ctx, next) => next();
      return;
    }
    const { secretToken } = config;
    this.endpoint = postEndpoint({
      path: '/telegram/webhook',
      name: 'Telegram gateway',
      stopped: () => core.closing,
      authorize: (ctx) => {
        if (!constantTimeEqual(ctx.get('X-Telegram-Bot-Api-Secret-Token'), secretToken)) throw unauthorized('Missing or wrong X-Telegram-Bot-Api-Secret-Token.');
      },
      handle: (ctx, body) => this.pushed(ctx, body),
    });
  }

  middleware(): Middleware {
    return this.endpoint;
  }

  start(): void {
    this.polling?.start();
  }

  async stop(): Promise<void> {
    await this.polling?.stop();
  }

  async postApproval(place: Place, approval: Approval): Promise<MessageRef> {
    const sent = await this.api.call<TelegramMessage>('sendMessage', {
      chat_id: Number(place.channel),
      text: this.describe(approval),
      reply_markup: {
        inline_keyboard: [
          [
            // Within Telegram's 64 bytes of callback data, a LangGraph interrupt's long approval id too.
            { text: 'Approve', callback_data: approvalButtonData(true, approval.id) },
            { text: 'Reject', callback_data: approvalButtonData(false, approval.id) },
          ],
        ],
      },
    });
    return { channel: place.channel, message: String(sent.message_id) };
  }

  async showOutcome(ref: MessageRef, approval: Approval): Promise<void> {
    const outcome = outcomeLine(approval, (by) => {
      const user = platformUser(by, 'telegram');
      return user === undefined ? by : `user ${user}`;
    });
    // Without reply_markup the keyboard goes with the edit.
    await this.api.call('editMessageText', { chat_id: Number(ref.channel), message_id: Number(ref.message), text: cut(`${this.describe(approval)}\n\n${outcome}`) });
  }

  async postReply(place: Place, text: string): Promise<MessageRef> {
    const sent = await this.api.call<TelegramMessage>('sendMessage', { chat_id: Number(place.channel), text: cut(text) });
    return { channel: place.channel, message: String(sent.message_id) };
  }

  async editReply(ref: MessageRef, text: string): Promise<void> {
    await this.api.call('editMessageText', { chat_id: Number(ref.channel), message_id: Number(ref.message), text: cut(text) });
  }

  private describe(approval: Approval): string {
    const { prompt, context, payload } = approvalLines(approval);
    return cut(`Approval requested: ${prompt}\n${payload === undefined ? '' : `${payload}\n`}${context}`);
  }

  private async pushed(ctx: Context, body: Buffer): Promise<void> {
    const update = parseJsonBody(body) as TelegramUpdate | null;
    if (typeof update?.update_id !== 'number') throw badRequest('A Telegram update needs its update_id.');
    ctx.body = '';
    // Failed: not acknowledged, so Telegram pushes the update again.
    await this.handleOnce(update);
  }

  /**
   * A polled update: one the gateway refuses for good (an AppError of the request, such as an
   * agent's start refused) is logged and passed over; any other failure leaves it unconfirmed,
   * polled again after a back-off.
   */
  private async polled(update: TelegramUpdate): Promise<void> {
    try {
      await this.handleOnce(update);
    } catch (error) {
      if (!isAppError(error) || error.code === 'unavailable' || error.code === 'internal') throw error;
      this.logger.warn({ err: error, update_id: update.update_id }, 'Telegram update refused; passed over');
    }
  }

  /** Handles an update unless another delivery (a push retried, a poll again) has; a failure gives the claim up so the next delivery is handled. */
  private async handleOnce(update: TelegramUpdate): Promise<void> {
    const key = `telegram:update:${update.update_id}`;
    if (!(await this.core.claim(key))) return;
    try {
      await this.handle(update);
    } catch (error) {
      await this.core.release(key);
      throw error;
    }
  }

  private async handle(update: TelegramUpdate): Promise<void> {
    const query = update.callback_query;
    if (query) {
      const button = parseApprovalButton(query.data);
      if (!button || !query.message) return this.answer(query.id, 'This button is not an approval.');
      const ref = { channel: String(query.message.chat.id), message: String(query.message.message_id) };
      const outcome = await this.core.press(this, button.approvalId, button.approved, String(query.from.id), ref);
      return this.answer(query.id, outcome === 'decided' ? (button.approved ? 'Approved.' : 'Rejected.') : PRESS_REFUSALS[outcome]);
    }
    const message = update.message;
    if (!message || message.from === undefined || typeof message.text !== 'string' || message.text.trim() === '') return;
    if ((message.from as { is_bot?: boolean }).is_bot === true) return;
    await this.core.converse(this, { channel: String(message.chat.id) }, message.text.trim());
  }

  /** Tells the presser the outcome; the decision stands even when this fails. */
  private async answer(queryId: string, text: string): Promise<void> {
    await this.api.call('answerCallbackQuery', { callback_query_id: queryId, text }).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'Telegram callback query was not answered');
    });
  }
}

function cut(text: string): string {
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 1)}…` : text;
}
