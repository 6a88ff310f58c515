/**
 * The fields of Telegram Bot API objects the adapter reads. Telegram ids fit in 52 bits
 * (Telegram guarantees it), so a JavaScript number holds them exactly.
 */
export interface TelegramUser {
  id: number;
  username?: string;
  first_name?: string;
}

export interface TelegramChat {
  id: number;
}

export interface TelegramMessage {
  message_id: number;
  chat: TelegramChat;
  from?: TelegramUser;
  text?: string;
}

export interface TelegramCallbackQuery {
  id: string;
  from: TelegramUser;
  /** The message carrying the pressed button; absent when that message is too old. */
  message?: TelegramMessage;
  data?: string;
}

export interface TelegramUpdate {
  update_id: number;
  message?: TelegramMessage;
  callback_query?: TelegramCallbackQuery;
}

/** The update kinds the adapter asks Telegram for, when polling and when pushed. */
export const HANDLED_UPDATE_KINDS: readonly string[] = ['message', 'callback_query'];

/** One button of an inline keyboard; `callbackData` comes back in the callback query (1–64 bytes). */
export interface InlineButton {
  text: string;
  callbackData: string;
}
