import { describe, expect, it, onTestFinished } from 'vitest';
import { setTelegramWebhook } from '../../src/integrations/telegram/set-telegram-webhook.js';
import { TelegramAdapter, type TelegramHandler, type TelegramText } from '../../src/integrations/telegram/telegram-adapter.js';
import type { TelegramCallbackQuery } from '../../src/integrations/telegram/telegram-types.js';
import { FakeTelegram, telegramError } from '../support/fake-platforms/fake-telegram.js';
import { waitFor } from '../support/wait.js';
import { expectStopWaitsForHandler, mountAdapter } from '../support/chat.js';

const BOT_TOKEN = '123456:telegram-bot-token';
const SECRET_TOKEN = 'push-secret_token-1';

/** The adapter in push mode, mounted on a Koa app and pointed at a fake Telegram. */
async function setup(reply: TelegramHandler = (input) => `re: ${input.text}`, secretToken?: string) {
  const fake = await FakeTelegram.start(BOT_TOKEN);
  const received: TelegramText[] = [];
  const handler: TelegramHandler = (input) => {
    received.push(input);
    return reply(input);
  };
  const mounted = await mountAdapter(fake, '/telegram/webhook', (logger) =>
    new TelegramAdapter({ botToken: BOT_TOKEN, apiBaseUrl: fake.url, secretToken, logger, handler }),
  );
  return { ...mounted, received };
}

let updateId = 1;
function textUpdate(text: string, chatId = 42, userId = 7): string {
  return JSON.stringify({
    update_id: updateId++,
    message: { message_id: 5, chat: { id: chatId, type: 'private' }, from: { id: userId, is_bot: false, first_name: 'Ada' }, date: 1, text },
  });
}

function push(url: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', body, headers: { 'Content-Type': 'application/json', ...headers } });
}

describe('Telegram adapter', () => {
  it('hands a pushed text message to the handler and answers with sendMessage in Markdown', async () => {
    const { url, fake, received } = await setup();
    const response = await push(url, textUpdate('hello', 9_007_199_254, 1_234_567_890_123));
    expect(response.status).toBe(200);
    await waitFor('sendMessage', () => fake.calls('sendMessage').length === 1);
    expect(received).toEqual([{ chatID: 9_007_199_254, userID: 1_234_567_890_123, text: 'hello' }]);
    const [call] = fake.calls('sendMessage');
    expect(call!.body).toEqual({ chat_id: 9_007_199_254, text: 're: hello', parse_mode: 'Markdown' });
    expect(call!.path).toBe(`/bot${BOT_TOKEN}/sendMessage`);
  });

  it('escapes a reply with _, *, ` and [ so that Telegram can parse it', async () => {
    const reply = 'use snake_case, 2*3 = 6, `code and [brackets';
    const { url, fake, logs } = await setup(() => reply);
    const raw = await fetch(`${fake.url}/bot${BOT_TOKEN}/sendMessage`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ chat_id: 42, text: reply, parse_mode: 'Markdown' }),
    });
    expect(raw.status).toBe(400);

    await push(url, textUpdate('tricky'));
    await waitFor('sendMessage', () => fake.calls('sendMessage').length === 2);
    expect(fake.calls('sendMessage')[1]!.body).toMatchObject({ text: 'use snake\\_case, 2\\*3 = 6, \\`code and \\[brackets' });
    expect(logs.filter((log) => log.level === 50)).toEqual([]);
  });

  it('sends nothing for an empty reply', async () => {
    const { url, fake, received } = await setup((input) => (input.text === 'quiet' ? '' : 'loud'));
    await push(url, textUpdate('quiet'));
    await push(url, textUpdate('speak'));
    await waitFor('the second reply', () => fake.calls('sendMessage').length === 1);
    expect(received).toHaveLength(2);
    expect(fake.calls('sendMessage')[0]!.body).toMatchObject({ text: 'loud' });
  });

  it('logs a refused sendMessage with Telegram error_code and description, and retries after a 429', async () => {
    const { url, fake, logs } = await setup();
    fake.server.queue((call) => call.path.endsWith('/sendMessage'), telegramError(400, 'Bad Request: chat not found'));
    await push(url, textUpdate('lost'));
    const logged = await waitFor('the error log', () => logs.find((log) => log.level === 50));
    expect(logged.err).toMatchObject({ platformCode: 400, message: expect.stringContaining('chat not found') });

    fake.server.queue((call) => call.path.endsWith('/sendMessage'), telegramError(429, 'Too Many Requests: retry after 0', { retry_after: 0 }));
    await push(url, textUpdate('busy'));
    await waitFor('the retried sendMessage', () => fake.calls('sendMessage').length === 3);
    expect(fake.calls('sendMessage')[2]!.body).toMatchObject({ text: 're: busy' });
    expect(JSON.stringify(logs)).not.toContain(BOT_TOKEN);
  });

  it('keeps a failing handler out of the HTTP answer', async () => {
    const { url, logs } = await setup(() => {
      throw new Error('handler exploded');
    });
    expect((await push(url, textUpdate('boom'))).status).toBe(200);
    await waitFor('the error log', () => logs.some((log) => (log.err as { message?: string } | undefined)?.message === 'handler exploded'));
  });

  it('sends an inline keyboard as rows of text / callback_data buttons', async () => {
    const { fake, adapter } = await setup();
    const sent = await adapter.sendInlineKeyboard(42, 'Publish the_draft?', [
      [
        { text: 'Approve', callbackData: 'yes' },
        { text: 'Reject', callbackData: 'no' },
      ],
      [{ text: 'Later', callbackData: 'later' }],
    ]);
    expect(sent.message_id).toEqual(expect.any(Number));
    expect(fake.calls('sendMessage')[0]!.body).toEqual({
      chat_id: 42,
      text: 'Publish the\\_draft?',
      parse_mode: 'Markdown',
      reply_markup: {
        inline_keyboard: [
          [
            { text: 'Approve', callback_data: 'yes' },
            { text: 'Reject', callback_data: 'no' },
          ],
          [{ text: 'Later', callback_data: 'later' }],
        ],
      },
    });
    expect(() => adapter.sendInlineKeyboard(42, 'x', [[{ text: 'Too long', callbackData: 'x'.repeat(65) }]])).toThrow(RangeError);
  });

  it('routes a pushed callback query to the callback handler', async () => {
    const { url, adapter } = await setup();
    const queries: TelegramCallbackQuery[] = [];
    adapter.onCallbackQuery((query) => void queries.push(query));
    const query = { id: 'cq1', from: { id: 7, is_bot: false, first_name: 'Ada' }, message: { message_id: 3, chat: { id: 42 }, date: 1 }, data: 'yes' };
    await push(url, JSON.stringify({ update_id: updateId++, callback_query: query }));
    await waitFor('the callback query', () => queries.length === 1);
    expect(queries[0]).toEqual(query);
  });

  it('checks X-Telegram-Bot-Api-Secret-Token when a secret token is set', async () => {
    const { url, fake, received } = await setup(undefined, SECRET_TOKEN);
    for (const headers of [{} as Record<string, string>, { 'X-Telegram-Bot-Api-Secret-Token': 'wrong' }, { 'X-Telegram-Bot-Api-Secret-Token': `${SECRET_TOKEN}x` }]) {
      const response = await push(url, textUpdate('intruder'), headers);
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
    }
    expect((await push(url, textUpdate('friend'), { 'X-Telegram-Bot-Api-Secret-Token': SECRET_TOKEN })).status).toBe(200);
    await waitFor('the reply', () => fake.calls('sendMessage').length === 1);
    expect(received.map((input) => input.text)).toEqual(['friend']);
  });

  it('answers 400 to a body that is not an update and 405 to GET', async () => {
    const { url } = await setup();
    expect((await push(url, '{"message":{}}')).status).toBe(400);
    expect((await push(url, 'nope')).status).toBe(400);
    expect((await fetch(url)).status).toBe(405);
  });

  it('stop() waits for a running handler, then the push endpoint answers 503', async () => {
    let release!: (reply: string) => void;
    const { url, fake, adapter } = await setup(() => new Promise<string>((resolve) => (release = resolve)));
    await push(url, textUpdate('slow'));
    await waitFor('the handler to start', () => release !== undefined);
    await expectStopWaitsForHandler(adapter, () => release('done'));
    expect(fake.calls('sendMessage')).toHaveLength(1);
    expect((await push(url, textUpdate('late'))).status).toBe(503);
    await adapter.stop();
  });

  it('registers the push endpoint with setWebhook', async () => {
    const fake = await FakeTelegram.start(BOT_TOKEN);
    onTestFinished(() => fake.close());
    await setTelegramWebhook({ botToken: BOT_TOKEN, apiBaseUrl: fake.url, url: 'https://bot.example.com/telegram/webhook', secretToken: SECRET_TOKEN });
    expect(fake.calls('setWebhook')[0]!.body).toEqual({
      url: 'https://bot.example.com/telegram/webhook',
      secret_token: SECRET_TOKEN,
      allowed_updates: ['message', 'callback_query'],
    });
    await expect(setTelegramWebhook({ botToken: 'wrong:token', apiBaseUrl: fake.url, url: 'https://x.example' })).rejects.toThrow(/401/);
  });
});
