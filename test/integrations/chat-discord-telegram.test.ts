import { describe, expect, it, onTestFinished } from 'vitest';
import { call } from '../support/app.js';
import { startGatewayStack } from '../support/chat-gateway.js';
import { bodiesOf, discordHeaders, discordKeys, startFakeDiscordApi, startFakeTelegramApi } from '../support/fake-platforms/fake-chat.js';
import type { RecordedCall, RecordingServer } from '../support/fake-platforms/recording-server.js';
import { useRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { STREAMED_ANSWER } from '../fixtures/chat-agents.js';

const redis = useRedis();
const DISCORD_TOKEN = 'discord-bot';
const TELEGRAM_TOKEN = '42:gateway-bot';
const SECRET_TOKEN = 'telegram_secret-1';
const APPROVALS_CHAT = -100_555;
const DISCORD_APPROVALS_CHANNEL = '400';

async function setup(backend: 'embedded' | 'redis') {
  const discord = await startFakeDiscordApi(DISCORD_TOKEN);
  onTestFinished(() => discord.close());
  const telegram = await startFakeTelegramApi(TELEGRAM_TOKEN);
  onTestFinished(() => telegram.close());
  const keys = discordKeys();
  const stack = await startGatewayStack(
    {
      DISCORD_BOT_TOKEN: DISCORD_TOKEN,
      DISCORD_PUBLIC_KEY: keys.publicHex,
      DISCORD_API_URL: discord.url,
      DISCORD_AGENT: 'chat-agent',
      DISCORD_APPROVALS_CHANNEL: DISCORD_APPROVALS_CHANNEL,
      DISCORD_APPROVERS: '111:user',
      TELEGRAM_BOT_TOKEN: TELEGRAM_TOKEN,
      TELEGRAM_SECRET_TOKEN: SECRET_TOKEN,
      TELEGRAM_API_URL: telegram.url,
      TELEGRAM_AGENT: 'chat-agent',
      TELEGRAM_APPROVALS_CHAT: String(APPROVALS_CHAT),
      TELEGRAM_APPROVERS: '501:admin',
    },
    backend === 'redis' ? redis.url : undefined,
  );
  const urls = stack.replicas.map((replica) => replica.url);
  return { discord, telegram, keys, urls, at: (n: number) => urls[n % urls.length]! };
}

/** The id the fake Discord answered for the message `posted` (it counts up from 9001 over every message created). */
function discordMessageId(discord: RecordingServer, posted: RecordedCall): string {
  return String(9_000 + discord.calls.filter((entry) => entry.method === 'POST' && /^\/channels\/\d+\/messages$/.test(entry.path)).indexOf(posted) + 1);
}

/**
 * The texts a streamed answer showed, in order: its first post, then each edit of that message.
 * Checks it is one message, growing: each edit adds to what the one before showed, the last
 * shows the whole of {@link STREAMED_ANSWER}, and far fewer edits than tokens (throttled).
 */
function expectStreamed(shown: string[]): void {
  expect(STREAMED_ANSWER.startsWith(shown[0]!) && shown[0]!.length < STREAMED_ANSWER.length).toBe(true);
  for (const [index, text] of shown.slice(1).entries()) expect(text.startsWith(shown[index]!) && text.length > shown[index]!.length).toBe(true);
  expect(shown.at(-1)).toBe(STREAMED_ANSWER);
  // Fifteen tokens 100 ms apart, edited at most once a second.
  expect(shown.length - 1).toBeLessThan(STREAMED_ANSWER.split(' ').length - 1);
}

describe.each(['embedded', 'redis'] as const)('Discord and Telegram chat gateway (%s)', (backend) => {
  it('Discord: PING, a command answered in its channel, an approval refused (bad signature, stale, not allowed) then decided once and edited', async () => {
    const { discord, keys, urls, at } = await setup(backend);
    const post = (url: string, interaction: object, headers?: Record<string, string>) => {
      const body = JSON.stringify(interaction);
      return call(`${url}/discord/interactions`, { method: 'POST', body, headers: { 'Content-Type': 'application/json', ...(headers ?? discordHeaders(keys.privateKey, body)) } });
    };
    expect((await post(at(0), { type: 1 })).body).toEqual({ type: 1 });
    const ask = (id: string, text: string) => ({ type: 2, id, application_id: '1', token: 't', channel_id: '300', member: { user: { id: '111' } }, data: { name: 'ask', options: [{ name: 'text', value: text }] } });
    const asked = await post(at(1), ask('i1', 'hello'));
    expect(asked.body).toMatchObject({ type: 4, data: { content: '<@111>: hello' } });
    await waitFor('the answer', () => bodiesOf(discord, '/channels/300/messages').find((body) => body.content === 'turn 1: hello'));

    expect((await post(at(0), ask('i2', 'deploy it'))).status).toBe(200);
    const posted = await waitFor('the approval message', () => discord.callsTo('/channels/300/messages').find((entry) => (entry.body as any).components));
    const approvalId = ((posted.body as any).components[0].components[0].custom_id as string).slice('apv:y:'.length);
    const messageId = String(9_000 + discord.callsTo('/channels/300/messages').indexOf(posted) + 1);
    const pressBody = (user: string, choice: 'y' | 'n') => ({ type: 3, id: `p-${user}-${choice}`, application_id: '1', token: 't', channel_id: '300', member: { user: { id: user } }, message: { id: messageId }, data: { custom_id: `apv:${choice}:${approvalId}`, component_type: 2 } });
    const raw = JSON.stringify(pressBody('111', 'y'));
    expect((await post(at(1), pressBody('111', 'y'), discordHeaders(discordKeys().privateKey, raw))).status).toBe(401);
    expect((await post(at(0), pressBody('111', 'y'), discordHeaders(keys.privateKey, raw, Math.floor(Date.now() / 1000) - 301))).status).toBe(401);
    expect((await post(at(1), pressBody('222', 'y'))).body).toEqual({ type: 4, data: { content: 'You may not decide approvals.', flags: 64 } });
    expect((await call(`${urls[0]}/api/approvals/${approvalId}`)).body.status).toBe('pending');

    expect((await post(at(0), pressBody('111', 'y'))).body).toEqual({ type: 6 });
    expect((await call(`${urls[0]}/api/approvals/${approvalId}`)).body).toMatchObject({ status: 'approved', decided_by: 'discord:111' });
    const edit = await waitFor('the edit', () => bodiesOf(discord, `/channels/300/messages/${messageId}`)[0]);
    expect(edit.content).toContain('**Approved by <@111>**');
    expect(edit.components).toEqual([]);
    await waitFor('the answer after the approval', () => bodiesOf(discord, '/channels/300/messages').find((body) => body.content === 'deployed'));
    // The replay and a second press change nothing.
    expect((await post(at(1), pressBody('111', 'y'))).body).toMatchObject({ data: { content: 'This approval was already decided.' } });
    expect((await post(at(0), pressBody('111', 'n'))).body).toMatchObject({ data: { content: 'This approval was already decided.' } });
    expect(discord.callsTo(`/messages/${messageId}`)).toHaveLength(1);
  });

  it('Discord: Comment opens a dialog for approvers only; its signed submission decides with the comment, once', async () => {
    const { discord, keys, urls, at } = await setup(backend);
    const post = (url: string, interaction: object, headers?: Record<string, string>) => {
      const body = JSON.stringify(interaction);
      return call(`${url}/discord/interactions`, { method: 'POST', body, headers: { 'Content-Type': 'application/json', ...(headers ?? discordHeaders(keys.privateKey, body)) } });
    };
    const ask = { type: 2, id: 'c1', application_id: '1', token: 't', channel_id: '310', member: { user: { id: '111' } }, data: { name: 'ask', options: [{ name: 'text', value: 'deploy v7' }] } };
    expect((await post(at(0), ask)).status).toBe(200);
    const posted = await waitFor('the approval message', () => discord.callsTo('/channels/310/messages').find((entry) => (entry.body as any).components));
    const buttons = (posted.body as any).components[0].components as { label: string; custom_id: string }[];
    expect(buttons.map((button) => button.label)).toEqual(['Approve', 'Reject', 'Comment…']);
    const approvalId = buttons[2]!.custom_id.slice('apv:c:'.length);
    const messageId = String(9_000 + discord.calls.indexOf(posted) + 1);
    const from = (user: string, type: number, data: object) => ({ type, id: `i-${user}-${type}`, application_id: '1', token: 't', channel_id: '310', member: { user: { id: user } }, message: { id: messageId }, data });

    const comment = (user: string) => from(user, 3, { custom_id: `apv:c:${approvalId}`, component_type: 2 });
    expect((await post(at(1), comment('222'))).body).toEqual({ type: 4, data: { content: 'You may not decide approvals.', flags: 64 } });
    const modal = (await post(at(0), comment('111'))).body;
    expect(modal).toMatchObject({ type: 9, data: { custom_id: `apd:${approvalId}`, title: 'Decide the approval' } });
    expect(modal.data.components.map((label: any) => [label.type, label.component.type, label.component.custom_id])).toEqual([
      [18, 3, 'decision'],
      [18, 4, 'comment'],
    ]);

    // What Discord sends on submit: each label with its input's value.
    const submit = (user: string, choice: string, text: string) =>
      from(user, 5, {
        custom_id: `apd:${approvalId}`,
        components: [
          { type: 18, id: 1, component: { type: 3, id: 2, custom_id: 'decision', values: [choice] } },
          { type: 18, id: 3, component: { type: 4, id: 4, custom_id: 'comment', value: text } },
        ],
      });
    const raw = JSON.stringify(submit('111', 'reject', 'not on a Friday'));
    expect((await post(at(1), submit('111', 'reject', 'not on a Friday'), discordHeaders(discordKeys().privateKey, raw))).status).toBe(401);
    expect((await post(at(1), submit('222', 'approve', 'sneaky'))).body).toMatchObject({ data: { content: 'You may not decide approvals.', flags: 64 } });
    expect((await post(at(0), submit('111', 'maybe', ''))).body).toMatchObject({ data: { content: 'Choose Approve or Reject.', flags: 64 } });
    expect((await call(`${urls[0]}/api/approvals/${approvalId}`)).body.status).toBe('pending');

    expect((await post(at(1), submit('111', 'reject', 'not on a Friday'))).body).toEqual({ type: 6 });
    expect((await call(`${urls[0]}/api/approvals/${approvalId}`)).body).toMatchObject({ status: 'rejected', comment: 'not on a Friday', decided_by: 'discord:111' });
    const edit = await waitFor('the edit', () => bodiesOf(discord, `/channels/310/messages/${messageId}`)[0]);
    expect(edit.content).toContain('**Rejected by <@111>**\n> not on a Friday');
    expect(edit.components).toEqual([]);
    await waitFor('the answer after the approval', () => bodiesOf(discord, '/channels/310/messages').find((body) => body.content === 'not deployed'));
    expect((await post(at(0), submit('111', 'approve', 'changed my mind'))).body).toMatchObject({ data: { content: 'This approval was already decided.' } });
    expect(discord.callsTo(`/messages/${messageId}`)).toHaveLength(1);
  });

  it('Discord: a run not started from Discord asks in DISCORD_APPROVALS_CHANNEL; decided through the API, the message is edited', async () => {
    const { discord, urls } = await setup(backend);
    const started = await call(`${urls[0]}/api/runs`, { method: 'POST', json: { agent_id: 'human-review', input: { topic: 'news' } } });
    expect(started.status).toBe(202);
    const posted = await waitFor('the approval message', () => discord.callsTo(`/channels/${DISCORD_APPROVALS_CHANNEL}/messages`).find((entry) => (entry.body as any).components));
    const body = posted.body as any;
    expect(body.content).toContain('**Approval requested**: Publish the draft?');
    const approvalId = (body.components[0].components[0].custom_id as string).slice('apv:y:'.length);
    const messageId = discordMessageId(discord, posted);
    const answered = await call(`${urls.at(-1)}/api/approval/respond`, { method: 'POST', json: { id: approvalId, approved: true, comment: 'ship it' } });
    expect(answered.status).toBe(200);
    const edit = await waitFor('the edit', () => bodiesOf(discord, `/channels/${DISCORD_APPROVALS_CHANNEL}/messages/${messageId}`)[0]);
    expect(edit.content).toMatch(/\*\*Approved by [^*]+\*\*\n> ship it$/);
    expect(edit.components).toEqual([]);
    await waitFor('the run to end', async () => (await call(`${urls[0]}/api/runs/${started.body.run_id}`)).body.status === 'completed');
    expect(discord.callsTo(`/messages/${messageId}`)).toHaveLength(1);
  });

  it('Discord: an answer is streamed: posted at its first token, edited at most once a second, the last edit the whole answer', async () => {
    const { discord, keys, at } = await setup(backend);
    const body = JSON.stringify({ type: 2, id: 's1', application_id: '1', token: 't', channel_id: '320', member: { user: { id: '111' } }, data: { name: 'ask', options: [{ name: 'text', value: 'stream please' }] } });
    const asked = await call(`${at(0)}/discord/interactions`, { method: 'POST', body, headers: { 'Content-Type': 'application/json', ...discordHeaders(keys.privateKey, body) } });
    expect(asked.status).toBe(200);
    const posted = await waitFor('the first post', () => discord.callsTo('/channels/320/messages')[0]);
    const messageId = discordMessageId(discord, posted);
    await waitFor('the whole answer', () => bodiesOf(discord, `/channels/320/messages/${messageId}`).find((edit) => edit.content === STREAMED_ANSWER));
    expect(discord.callsTo('/channels/320/messages')).toHaveLength(1);
    expect(discord.calls.filter((entry) => entry.method === 'PATCH').every((entry) => entry.path === `/channels/320/messages/${messageId}`)).toBe(true);
    expectStreamed([(posted.body as any).content, ...bodiesOf(discord, `/channels/320/messages/${messageId}`).map((edit) => edit.content as string)]);
  });

  it('Telegram: an answer is streamed (sendMessage, then editMessageText of it); messages from bots start nothing', async () => {
    const { telegram, at } = await setup(backend);
    const push = (url: string, update: object) => call(`${url}/telegram/webhook`, { method: 'POST', json: update, headers: { 'X-Telegram-Bot-Api-Secret-Token': SECRET_TOKEN } });
    const text = (updateId: number, chat: number, from: { id: number; is_bot: boolean }, words: string) => ({ update_id: updateId, message: { message_id: updateId, chat: { id: chat }, from, date: 1, text: words } });
    expect((await push(at(0), text(30, 79, { id: 501, is_bot: false }, 'stream please'))).status).toBe(200);
    const posted = await waitFor('the first post', () => bodiesOf(telegram, 'sendMessage').find((body) => body.chat_id === 79));
    const messageId = 700 + bodiesOf(telegram, 'sendMessage').indexOf(posted) + 1;
    await waitFor('the whole answer', () => bodiesOf(telegram, 'editMessageText').find((edit) => edit.text === STREAMED_ANSWER));
    const edits = bodiesOf(telegram, 'editMessageText');
    expect(edits.every((edit) => edit.chat_id === 79 && edit.message_id === messageId)).toBe(true);
    expect(bodiesOf(telegram, 'sendMessage').filter((body) => body.chat_id === 79)).toHaveLength(1);
    expectStreamed([posted.text, ...edits.map((edit) => edit.text as string)]);

    // Another bot's message in a chat (a group with two bots) is not a message to answer: it
    // starts no run, so the person's message after it is the conversation's first turn.
    expect((await push(at(1), text(31, 80, { id: 9001, is_bot: true }, 'from a bot'))).status).toBe(200);
    expect((await push(at(0), text(32, 80, { id: 501, is_bot: false }, 'from a person'))).status).toBe(200);
    await waitFor('the person’s answer', () => bodiesOf(telegram, 'sendMessage').find((body) => body.chat_id === 80));
    expect(bodiesOf(telegram, 'sendMessage').filter((body) => body.chat_id === 80).map((body) => body.text)).toEqual(['turn 1: from a person']);
  });

  it('Telegram: a chat is a session; an approval refused without the secret token or for a user not allowed, decided once; one decided through the API is edited', async () => {
    const { telegram, urls, at } = await setup(backend);
    const push = (url: string, update: object, token = SECRET_TOKEN) =>
      call(`${url}/telegram/webhook`, { method: 'POST', json: update, headers: { 'X-Telegram-Bot-Api-Secret-Token': token } });
    const text = (updateId: number, words: string) => ({ update_id: updateId, message: { message_id: updateId, chat: { id: 77 }, from: { id: 501, is_bot: false }, date: 1, text: words } });
    expect((await push(at(0), text(1, 'hello'))).status).toBe(200);
    expect((await push(at(1), text(1, 'hello'))).status).toBe(200);
    expect((await push(at(1), text(2, 'again'))).status).toBe(200);
    await waitFor('two answers', () => bodiesOf(telegram, 'sendMessage').length === 2);
    expect(bodiesOf(telegram, 'sendMessage').map((body) => [body.chat_id, body.text])).toEqual([
      [77, 'turn 1: hello'],
      [77, 'turn 2: again'],
    ]);

    expect((await push(at(0), text(3, 'deploy now'))).status).toBe(200);
    const posted = await waitFor('the approval', () => bodiesOf(telegram, 'sendMessage').find((body) => body.reply_markup));
    expect(posted.chat_id).toBe(77);
    const approvalId = (posted.reply_markup.inline_keyboard[0][0].callback_data as string).slice('apv:y:'.length);
    const messageId = 700 + bodiesOf(telegram, 'sendMessage').indexOf(posted) + 1;
    const pressUpdate = (updateId: number, user: number, choice: 'y' | 'n') => ({
      update_id: updateId,
      callback_query: { id: `q${updateId}`, from: { id: user, is_bot: false }, message: { message_id: messageId, chat: { id: 77 }, date: 1 }, data: `apv:${choice}:${approvalId}` },
    });
    expect((await push(at(1), pressUpdate(10, 501, 'y'), 'wrong')).status).toBe(401);
    expect((await push(at(0), pressUpdate(11, 999, 'y'))).status).toBe(200);
    expect(bodiesOf(telegram, 'answerCallbackQuery').at(-1)).toMatchObject({ callback_query_id: 'q11', text: 'You may not decide approvals.' });
    expect((await push(at(1), pressUpdate(12, 501, 'y'))).status).toBe(200);
    expect((await call(`${urls[0]}/api/approvals/${approvalId}`)).body).toMatchObject({ status: 'approved', decided_by: 'telegram:501' });
    const edit = await waitFor('the edit', () => bodiesOf(telegram, 'editMessageText')[0]);
    expect(edit).toMatchObject({ chat_id: 77, message_id: messageId });
    expect(edit.text).toMatch(/Approved by user 501$/);
    // Telegram's retry of the press (same update_id) and a second press change nothing.
    expect((await push(at(0), pressUpdate(12, 501, 'y'))).status).toBe(200);
    expect((await push(at(0), pressUpdate(13, 501, 'n'))).status).toBe(200);
    expect(bodiesOf(telegram, 'answerCallbackQuery').at(-1)).toMatchObject({ callback_query_id: 'q13', text: 'This approval was already decided.' });
    await waitFor('the answer after the approval', () => bodiesOf(telegram, 'sendMessage').find((body) => body.text === 'deployed'));
    expect(telegram.callsTo('editMessageText')).toHaveLength(1);

    // A run not started from a chat: posted in the approvals chat, decided through the API, edited.
    const started = await call(`${urls[0]}/api/runs`, { method: 'POST', json: { agent_id: 'human-review', input: {} } });
    expect(started.status).toBe(202);
    const asked = await waitFor('the approvals chat post', () => bodiesOf(telegram, 'sendMessage').find((body) => body.chat_id === APPROVALS_CHAT));
    const otherId = (asked.reply_markup.inline_keyboard[0][1].callback_data as string).slice('apv:n:'.length);
    expect((await call(`${urls.at(-1)}/api/approval/respond`, { method: 'POST', json: { id: otherId, approved: true } })).status).toBe(200);
    const second = await waitFor('the second edit', () => bodiesOf(telegram, 'editMessageText').find((body) => body.chat_id === APPROVALS_CHAT));
    expect(second.text).toMatch(/\n\nApproved by .+$/);
    expect(telegram.callsTo('editMessageText')).toHaveLength(2);
  });
});
