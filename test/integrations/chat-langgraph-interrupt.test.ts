import { describe, expect, it, onTestFinished } from 'vitest';
import { call } from '../support/app.js';
import { startGatewayStack } from '../support/chat-gateway.js';
import { bodiesOf, slackHeaders, startFakeSlackApi, startFakeTelegramApi } from '../support/fake-platforms/fake-chat.js';
import { useRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { chatAgentsAndApprovalGraph } from '../fixtures/chat-graph.js';

const SLACK_TOKEN = 'xoxb-interrupt';
const SLACK_SECRET = 'slack-signing-secret';
const TELEGRAM_TOKEN = '43:interrupt-bot';
const TELEGRAM_SECRET = 'telegram_secret-2';
const redis = useRedis();

/** The state of a conversation's session, as GET /api/sessions/state answers it. */
async function stateOf(url: string, sessionId: string): Promise<Record<string, any>> {
  return (await call(`${url}/api/sessions/state?session_id=${encodeURIComponent(sessionId)}`)).body.state;
}

/**
 * A LangGraph graph (test/fixtures/chat-graph.ts) that calls `interrupt({...})` answering in
 * chat, embedded and on Redis (two API replicas and a worker): the interrupt is posted as an
 * approval with buttons in the conversation, an approver's verified press resumes the graph
 * with `{ approved, comment }` (its state keeps it), the message is edited with the outcome
 * and who decided, and the graph's answer is posted.
 */
describe.each(['embedded', 'redis'] as const)('LangGraph interrupts in chat (%s)', (backend) => {
  it('Slack: the interrupt is posted with buttons; refused to a user not allowed; an approver’s signed press resumes the graph with the decision; the message edited', async () => {
    const fake = await startFakeSlackApi(SLACK_TOKEN);
    onTestFinished(() => fake.close());
    const env = { SLACK_BOT_TOKEN: SLACK_TOKEN, SLACK_SIGNING_SECRET: SLACK_SECRET, SLACK_API_URL: `${fake.url}/api`, SLACK_AGENT: 'approval-graph', SLACK_APPROVERS: 'U0123:user' };
    const { replicas } = await startGatewayStack(env, backend === 'redis' ? redis.url : undefined, chatAgentsAndApprovalGraph);
    const urls = replicas.map((replica) => replica.url);
    const signed = (url: string, path: string, body: string, type: string) =>
      call(`${url}${path}`, { method: 'POST', body, headers: { 'Content-Type': type, ...slackHeaders(SLACK_SECRET, body) } });
    const event = JSON.stringify({ type: 'event_callback', event_id: 'EvI1', event: { type: 'app_mention', channel: 'C7', user: 'U0123', text: '<@UBOT> v3', ts: '700.000001' } });
    expect((await signed(urls[0]!, '/slack/events', event, 'application/json')).status).toBe(200);

    const posted = await waitFor('the approval message', () => bodiesOf(fake, 'chat.postMessage').find((body) => body.blocks));
    expect(posted).toMatchObject({ channel: 'C7', thread_ts: '700.000001', text: 'Approval requested: Deploy v3?' });
    const buttons = posted.blocks.at(-1).elements as { action_id: string; value: string }[];
    expect(buttons.map((button) => button.action_id)).toEqual(['approve', 'reject', 'comment']);
    const approvalId = buttons[0]!.value;
    const approval = await call(`${urls.at(-1)}/api/approvals/${approvalId}`);
    expect(approval.body).toMatchObject({ status: 'pending', agent_id: 'approval-graph', session_id: 'slack:C7:700.000001', payload: { prompt: 'Deploy v3?', target: 'v3' } });
    // The graph's whole interrupt value is shown with the prompt.
    expect(JSON.stringify(posted.blocks)).toContain('\\"target\\": \\"v3\\"');
    // The fake's first post: its ts.
    expect(fake.calls).toHaveLength(1);
    const ts = '1700000001.000100';

    const press = (url: string, user: string, action: 'approve' | 'reject') => {
      const payload = { type: 'block_actions', user: { id: user }, actions: [{ action_id: action, block_id: 'agentplane_approval', value: approvalId }], container: { channel_id: 'C7', message_ts: ts } };
      return signed(url, '/slack/interactions', new URLSearchParams({ payload: JSON.stringify(payload) }).toString(), 'application/x-www-form-urlencoded');
    };
    expect((await press(urls.at(-1)!, 'U0999', 'approve')).status).toBe(200);
    await waitFor('the refusal notice', () => bodiesOf(fake, 'chat.postEphemeral').find((body) => body.user === 'U0999' && body.text === 'You may not decide approvals.'));
    expect((await call(`${urls[0]}/api/approvals/${approvalId}`)).body.status).toBe('pending');

    expect((await press(urls.at(-1)!, 'U0123', 'approve')).status).toBe(200);
    expect((await call(`${urls[0]}/api/approvals/${approvalId}`)).body).toMatchObject({ status: 'approved', decided_by: 'slack:U0123' });
    const edit = await waitFor('the edited message', () => bodiesOf(fake, 'chat.update')[0]);
    expect(edit).toMatchObject({ channel: 'C7', ts, text: 'Approved by <@U0123>: Deploy v3?' });
    expect(JSON.stringify(edit.blocks)).not.toContain('"actions"');
    await waitFor('the graph’s answer', () => bodiesOf(fake, 'chat.postMessage').find((body) => body.text === 'deployed' && body.thread_ts === '700.000001'));
    // The graph was resumed with the decision: its node kept what interrupt() returned.
    expect((await stateOf(urls[0]!, 'slack:C7:700.000001')).decision).toEqual({ approved: true, comment: '' });
    expect(fake.callsTo('chat.update')).toHaveLength(1);
  });

  it('Telegram: the interrupt’s approval (a long id) fits the buttons’ 64 bytes; a press resumes the graph; the message edited', async () => {
    const telegram = await startFakeTelegramApi(TELEGRAM_TOKEN);
    onTestFinished(() => telegram.close());
    const env = { TELEGRAM_BOT_TOKEN: TELEGRAM_TOKEN, TELEGRAM_SECRET_TOKEN: TELEGRAM_SECRET, TELEGRAM_API_URL: telegram.url, TELEGRAM_AGENT: 'approval-graph', TELEGRAM_APPROVERS: '501:user' };
    const { replicas } = await startGatewayStack(env, backend === 'redis' ? redis.url : undefined, chatAgentsAndApprovalGraph);
    const urls = replicas.map((replica) => replica.url);
    const push = (url: string, update: object) => call(`${url}/telegram/webhook`, { method: 'POST', json: update, headers: { 'X-Telegram-Bot-Api-Secret-Token': TELEGRAM_SECRET } });
    expect((await push(urls[0]!, { update_id: 1, message: { message_id: 1, chat: { id: 78 }, from: { id: 501, is_bot: false }, date: 1, text: 'v4' } })).status).toBe(200);

    const posted = await waitFor('the approval', () => bodiesOf(telegram, 'sendMessage').find((body) => body.reply_markup));
    expect(posted.chat_id).toBe(78);
    expect(posted.text).toMatch(/^Approval requested: Deploy v4\?/);
    const [approve, reject] = posted.reply_markup.inline_keyboard[0] as { text: string; callback_data: string }[];
    expect([approve!.text, reject!.text]).toEqual(['Approve', 'Reject']);
    for (const button of [approve!, reject!]) expect(Buffer.byteLength(button.callback_data)).toBeLessThanOrEqual(64);
    const { approvals } = (await call(`${urls[0]}/api/approvals?status=pending`)).body;
    expect(approvals).toHaveLength(1);
    const approvalId = approvals[0].id as string;
    // A LangGraph approval id: the run id, then the interrupt's 32 hexadecimal digits.
    expect(approvalId).toMatch(/^[0-9a-f-]{36}\.[0-9a-f]{32}$/);

    const press = { update_id: 2, callback_query: { id: 'q2', from: { id: 501, is_bot: false }, message: { message_id: 701, chat: { id: 78 }, date: 1 }, data: approve!.callback_data } };
    expect((await push(urls.at(-1)!, press)).status).toBe(200);
    expect(bodiesOf(telegram, 'answerCallbackQuery').at(-1)).toMatchObject({ callback_query_id: 'q2', text: 'Approved.' });
    expect((await call(`${urls[0]}/api/approvals/${approvalId}`)).body).toMatchObject({ status: 'approved', decided_by: 'telegram:501' });
    const edit = await waitFor('the edit', () => bodiesOf(telegram, 'editMessageText')[0]);
    expect(edit).toMatchObject({ chat_id: 78, message_id: 701 });
    expect(edit.text).toMatch(/\n\nApproved by user 501$/);
    await waitFor('the graph’s answer', () => bodiesOf(telegram, 'sendMessage').find((body) => body.text === 'deployed'));
    expect((await stateOf(urls[0]!, 'telegram:78')).decision).toEqual({ approved: true, comment: '' });
  });
});
