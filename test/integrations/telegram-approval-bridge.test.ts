import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.js';
import type { Approval } from '../../src/domain/types.js';
import type { RunControl } from '../../src/ports/run-control.js';
import type { ApprovalDecision } from '../../src/ports/store.js';
import { TelegramAdapter } from '../../src/integrations/telegram/telegram-adapter.js';
import { ALREADY_DECIDED_TEXT, TelegramApprovalBridge } from '../../src/integrations/telegram/telegram-approval-bridge.js';
import { FakeTelegram } from '../support/fake-platforms/fake-telegram.js';
import { waitFor } from '../support/wait.js';

// The bridge's own logic (buttons, chat and user checks, error texts) against a scripted
// RunControl. The end-to-end test with a real human-review run is telegram-approvals-run.test.ts.

const BOT_TOKEN = '42:approvals-bot';
const CHAT = -100_200_300;
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function approval(id: string): Approval {
  return {
    id,
    session_id: 'sess-1',
    node_id: 'review',
    prompt: 'Publish the draft?',
    requested_at: '2026-11-21T10:00:00.000Z',
    run_id: 'run-1',
    agent_id: 'human-review',
    status: 'pending',
  };
}

/** Records decisions; `decide` scripts the answer of each. */
function scriptedRunControl(decide: (id: string, decision: ApprovalDecision) => Approval): RunControl & { decisions: [string, string, ApprovalDecision][] } {
  const decisions: [string, string, ApprovalDecision][] = [];
  return {
    decisions,
    startRun: () => Promise.reject(new Error('not used')),
    resumeSession: () => Promise.reject(new Error('not used')),
    cancelRun: () => Promise.reject(new Error('not used')),
    queueDepth: () => Promise.reject(new Error('not used')),
    answerApproval: async (tenant, id, decision) => {
      decisions.push([tenant, id, decision]);
      return decide(id, decision);
    },
  };
}

async function setup(runControl: RunControl, options: { allowedUserIds?: number[]; pending?: Approval[] } = {}) {
  const fake = await FakeTelegram.start(BOT_TOKEN);
  const adapter = new TelegramAdapter({ botToken: BOT_TOKEN, apiBaseUrl: fake.url, pollTimeoutSec: 1, handler: () => '' });
  const bridge = new TelegramApprovalBridge({
    telegram: adapter,
    runControl,
    chatId: CHAT,
    tenant: 'acme',
    allowedUserIds: options.allowedUserIds,
    approvals: { listPendingApprovals: async () => options.pending ?? [] },
  });
  adapter.onCallbackQuery((query) => bridge.handleCallbackQuery(query));
  adapter.start();
  cleanup.push(() => fake.close(), () => adapter.stop());
  return { fake, bridge };
}

function press(fake: FakeTelegram, data: string, options: { chatId?: number; userId?: number; messageId?: number } = {}): string {
  const id = `cq-${Math.random().toString(36).slice(2)}`;
  fake.push({
    callback_query: {
      id,
      from: { id: options.userId ?? 7, is_bot: false, first_name: 'Ada', username: 'ada' },
      message: { message_id: options.messageId ?? 1, chat: { id: options.chatId ?? CHAT }, date: 1, text: 'Approval requested: Publish the draft?' },
      data,
    },
  });
  return id;
}

async function answerTo(fake: FakeTelegram, queryId: string): Promise<Record<string, unknown>> {
  const call = await waitFor(`answerCallbackQuery ${queryId}`, () =>
    fake.calls('answerCallbackQuery').find((entry) => (entry.body as { callback_query_id: string }).callback_query_id === queryId),
  );
  return call.body as Record<string, unknown>;
}

describe('Telegram approvals bridge', () => {
  it('posts an approval with Approve / Reject buttons carrying its id', async () => {
    const { fake, bridge } = await setup(scriptedRunControl(() => approval('a')));
    await bridge.postApproval(approval('0190a0a0-0000-7000-8000-000000000001'));
    expect(fake.calls('sendMessage')[0]!.body).toMatchObject({
      chat_id: CHAT,
      text: expect.stringContaining('Publish the draft?'),
      reply_markup: {
        inline_keyboard: [
          [
            { text: 'Approve', callback_data: 'apv:y:0190a0a0-0000-7000-8000-000000000001' },
            { text: 'Reject', callback_data: 'apv:n:0190a0a0-0000-7000-8000-000000000001' },
          ],
        ],
      },
    });
  });

  it("posts a LangGraph interrupt's approval (a run id and 32 hex digits) within Telegram's 64 bytes of callback data; its press decides that approval", async () => {
    const runControl = scriptedRunControl((id, decision) => ({ ...approval(id), status: decision.approved ? 'approved' : 'rejected' }));
    const { fake, bridge } = await setup(runControl);
    const id = '0190a0a0-0000-7000-8000-000000000001.5d41402abc4b2a76b9719d911017c592';
    await bridge.postApproval(approval(id));
    const [approve, reject] = (fake.calls('sendMessage')[0]!.body as { reply_markup: { inline_keyboard: { callback_data: string }[][] } }).reply_markup.inline_keyboard[0]!;
    for (const button of [approve!, reject!]) expect(Buffer.byteLength(button.callback_data)).toBeLessThanOrEqual(64);
    expect(await answerTo(fake, press(fake, reject!.callback_data))).toMatchObject({ text: 'Rejected.' });
    expect(runControl.decisions).toEqual([['acme', id, { approved: false, comment: '', decided_by: 'telegram:7' }]]);
  });

  it('postPending posts each pending approval once', async () => {
    const pending = [approval('p1'), approval('p2')];
    const { fake, bridge } = await setup(scriptedRunControl(() => approval('x')), { pending });
    expect(await bridge.postPending()).toBe(2);
    expect(await bridge.postPending()).toBe(0);
    pending.push(approval('p3'));
    expect(await bridge.postPending()).toBe(1);
    expect(fake.calls('sendMessage').map((call) => (call.body as { reply_markup: { inline_keyboard: { callback_data: string }[][] } }).reply_markup.inline_keyboard[0]![0]!.callback_data)).toEqual([
      'apv:y:p1',
      'apv:y:p2',
      'apv:y:p3',
    ]);
  });

  it('decides through RunControl, answers the press and replaces the buttons with the outcome', async () => {
    const runControl = scriptedRunControl((id, decision) => ({ ...approval(id), status: decision.approved ? 'approved' : 'rejected' }));
    const { fake } = await setup(runControl);
    const reject = press(fake, 'apv:n:a1', { messageId: 77 });
    expect(await answerTo(fake, reject)).toMatchObject({ text: 'Rejected.' });
    await waitFor('the message edit', () => fake.calls('editMessageText').length === 1);
    expect(fake.calls('editMessageText')[0]!.body).toMatchObject({ chat_id: CHAT, message_id: 77, text: expect.stringContaining('Rejected by @ada') });
    expect(runControl.decisions).toEqual([['acme', 'a1', { approved: false, comment: '', decided_by: 'telegram:7' }]]);
  });

  it('maps conflict to "already decided", not_found and failures to their own answers', async () => {
    const runControl = scriptedRunControl((id) => {
      if (id === 'decided') throw new AppError('conflict', 'Approval decided already.');
      if (id === 'gone') throw new AppError('not_found', 'Approval was not found.');
      if (id === 'decidable') return { ...approval(id), status: 'approved' };
      throw new Error('store down');
    });
    const { fake } = await setup(runControl);
    expect(await answerTo(fake, press(fake, 'apv:y:decided'))).toMatchObject({ text: ALREADY_DECIDED_TEXT, show_alert: true });
    expect(await answerTo(fake, press(fake, 'apv:y:gone'))).toMatchObject({ text: 'This approval does not exist any more.' });
    expect(await answerTo(fake, press(fake, 'apv:y:other'))).toMatchObject({ text: 'The decision could not be recorded; please try again.' });
    // A message is edited after its press is answered: the edit of a press decided behind them is the only one.
    expect(await answerTo(fake, press(fake, 'apv:y:decidable', { messageId: 88 }))).toMatchObject({ text: 'Approved.' });
    await waitFor('the edit of the decided press', () => fake.calls('editMessageText').length > 0);
    expect(fake.calls('editMessageText').map((call) => (call.body as { message_id: number }).message_id)).toEqual([88]);
  });

  it('refuses presses from another chat, from users not allowed, and foreign buttons, deciding nothing', async () => {
    const runControl = scriptedRunControl((id) => approval(id));
    const { fake } = await setup(runControl, { allowedUserIds: [7] });
    expect(await answerTo(fake, press(fake, 'apv:y:a1', { chatId: 999 }))).toMatchObject({ text: 'Approvals are decided in the approvals chat only.' });
    expect(await answerTo(fake, press(fake, 'apv:y:a1', { userId: 8 }))).toMatchObject({ text: 'You may not decide approvals.' });
    expect(await answerTo(fake, press(fake, 'something-else'))).toMatchObject({ text: 'This button is not an approval.' });
    expect(runControl.decisions).toEqual([]);
  });
});
