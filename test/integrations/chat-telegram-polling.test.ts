import { describe, expect, it, onTestFinished } from 'vitest';
import { call } from '../support/app.js';
import { startGatewayStack } from '../support/chat-gateway.js';
import { FakeTelegram } from '../support/fake-platforms/fake-telegram.js';
import { useRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

const redis = useRedis();
const TOKEN = '42:polling-bot';
const CHAT = 77;

/** The bodies of a Bot API method's calls to the fake, in order. */
const bodies = (fake: FakeTelegram, method: string) => fake.calls(method).map((entry) => entry.body as Record<string, any>);

/**
 * TELEGRAM_MODE=polling as `npm start` serves it: no route, updates taken with getUpdates from a
 * fake Telegram that holds long polls; embedded, and on Redis with two API replicas (one polls).
 */
describe.each(['embedded', 'redis'] as const)('Telegram chat gateway, long polling (%s)', (backend) => {
  it('a chat of two turns and an approval decided by an approver, all polled; no webhook route; one poller', async () => {
    const fake = await FakeTelegram.start(TOKEN);
    onTestFinished(() => fake.close());
    const env = { TELEGRAM_BOT_TOKEN: TOKEN, TELEGRAM_MODE: 'polling', TELEGRAM_API_URL: fake.url, TELEGRAM_AGENT: 'chat-agent', TELEGRAM_APPROVERS: '501:admin' };
    const { replicas } = await startGatewayStack(env, backend === 'redis' ? redis.url : undefined);
    const text = (words: string) => ({ message: { message_id: 1, chat: { id: CHAT, type: 'private' }, from: { id: 501, is_bot: false }, date: 1, text: words } });

    fake.push(text('hello'));
    fake.push(text('again'));
    await waitFor('two answers', () => bodies(fake, 'sendMessage').length === 2);
    expect(bodies(fake, 'sendMessage').map((body) => [body.chat_id, body.text])).toEqual([
      [CHAT, 'turn 1: hello'],
      [CHAT, 'turn 2: again'],
    ]);
    expect((await call(`${replicas[0]!.url}/telegram/webhook`, { method: 'POST', json: { update_id: 1 } })).status).toBe(404);

    fake.push(text('deploy now'));
    const posted = await waitFor('the approval', () => bodies(fake, 'sendMessage').find((body) => body.reply_markup));
    const approvalId = (posted.reply_markup.inline_keyboard[0][0].callback_data as string).slice('apv:y:'.length);
    const messageId = bodies(fake, 'sendMessage').indexOf(posted) + 1;
    const press = (query: string, user: number) => ({
      callback_query: { id: query, from: { id: user, is_bot: false }, message: { message_id: messageId, chat: { id: CHAT }, date: 1 }, data: `apv:y:${approvalId}` },
    });
    fake.push(press('q1', 999));
    await waitFor('the refusal', () => bodies(fake, 'answerCallbackQuery').find((body) => body.callback_query_id === 'q1'));
    expect(bodies(fake, 'answerCallbackQuery')[0]).toMatchObject({ text: 'You may not decide approvals.' });
    expect((await call(`${replicas[0]!.url}/api/approvals/${approvalId}`)).body.status).toBe('pending');
    fake.push(press('q2', 501));
    await waitFor('the answer after the approval', () => bodies(fake, 'sendMessage').find((body) => body.text === 'deployed'));
    expect((await call(`${replicas.at(-1)!.url}/api/approvals/${approvalId}`)).body).toMatchObject({ status: 'approved', decided_by: 'telegram:501' });
    const edit = await waitFor('the edit', () => bodies(fake, 'editMessageText')[0]);
    expect(edit).toMatchObject({ chat_id: CHAT, message_id: messageId });
    expect(edit.text).toMatch(/Approved by user 501$/);

    const pollers = replicas.filter((replica) => replica.logs.some((line) => line.msg === 'this process polls Telegram (it holds the poller lease)'));
    expect(pollers).toHaveLength(1);
    expect(fake.overlappingPolls).toBe(0);
    expect(fake.calls('deleteWebhook')).toHaveLength(1);
  });
});
