import { afterEach, describe, expect, it } from 'vitest';
import { TelegramAdapter } from '../../src/integrations/telegram/telegram-adapter.js';
import { ALREADY_DECIDED_TEXT, TelegramApprovalBridge } from '../../src/integrations/telegram/telegram-approval-bridge.js';
import { call, startTestApi } from '../support/app.js';
import { FakeTelegram } from '../support/fake-platforms/fake-telegram.js';
import type { RecordedCall } from '../support/fake-platforms/recording-server.js';
import { waitFor } from '../support/wait.js';

const BOT_TOKEN = '77:approvals-bot';
const CHAT = -1_001_234;
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function pressButton(fake: FakeTelegram, id: string, callbackData: string, messageId: number): void {
  fake.push({
    callback_query: {
      id,
      from: { id: 501, is_bot: false, first_name: 'Grace', username: 'grace' },
      message: { message_id: messageId, chat: { id: CHAT }, date: 1, text: 'Approval requested: Publish the draft?' },
      data: callbackData,
    },
  });
}

function answerOf(fake: FakeTelegram, queryId: string): RecordedCall | undefined {
  return fake.calls('answerCallbackQuery').find((entry) => (entry.body as { callback_query_id: string }).callback_query_id === queryId);
}

describe('Telegram approvals with a real human-review run', () => {
  it('a button press resumes the run to completion; a second press answers "already decided"', async () => {
    const api = await startTestApi();
    cleanup.push(() => api.close());
    const fake = await FakeTelegram.start(BOT_TOKEN);
    cleanup.push(() => fake.close());
    const adapter = new TelegramAdapter({ botToken: BOT_TOKEN, apiBaseUrl: fake.url, pollTimeoutSec: 1, handler: () => '' });
    const bridge = new TelegramApprovalBridge({
      telegram: adapter,
      runControl: api.composition.runs,
      chatId: CHAT,
      approvals: api.backend.store.approvals,
    });
    adapter.onCallbackQuery((query) => bridge.handleCallbackQuery(query));
    adapter.start();
    cleanup.push(() => adapter.stop());

    const started = await call(`${api.url}/api/runs`, { method: 'POST', json: { agent_id: 'human-review', input: { topic: 'release notes' } } });
    expect(started.status).toBe(202);
    const runId = started.body.run_id as string;
    await waitFor('the run to wait for approval', async () => (await call(`${api.url}/api/runs/${runId}`)).body.status === 'interrupted');

    expect(await bridge.postPending()).toBe(1);
    const prompt = fake.calls('sendMessage')[0]!.body as { chat_id: number; text: string; reply_markup: { inline_keyboard: { callback_data: string }[][] } };
    expect(prompt.chat_id).toBe(CHAT);
    expect(prompt.text).toContain('Publish the draft?');
    const [approve] = prompt.reply_markup.inline_keyboard[0]!;
    const pending = (await call(`${api.url}/api/approval/pending`)).body.pending;
    expect(approve!.callback_data).toBe(`apv:y:${pending[0].id}`);

    pressButton(fake, 'press-1', approve!.callback_data, 1);
    expect((await waitFor('the first answer', () => answerOf(fake, 'press-1'))).body).toMatchObject({ text: 'Approved.' });
    const run = await waitFor('the run to complete', async () => {
      const current = await call(`${api.url}/api/runs/${runId}`);
      return current.body.status === 'completed' && current.body;
    });
    expect(run.session_id).toBe(started.body.session_id);
    const state = await call(`${api.url}/api/sessions/state?session_id=${run.session_id}`);
    expect(state.body.state).toMatchObject({ outcome: 'published', approved: true });
    expect((await call(`${api.url}/api/approval/pending`)).body.pending).toEqual([]);

    pressButton(fake, 'press-2', prompt.reply_markup.inline_keyboard[0]![1]!.callback_data, 1);
    expect((await waitFor('the second answer', () => answerOf(fake, 'press-2'))).body).toMatchObject({ text: ALREADY_DECIDED_TEXT, show_alert: true });
    expect(ALREADY_DECIDED_TEXT).toMatch(/already decided/);
    expect((await call(`${api.url}/api/runs/${runId}`)).body.status).toBe('completed');
    expect((await call(`${api.url}/api/sessions/state?session_id=${run.session_id}`)).body.state).toMatchObject({ outcome: 'published' });
  });
});
