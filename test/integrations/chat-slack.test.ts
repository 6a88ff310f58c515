import { describe, expect, it, onTestFinished } from 'vitest';
import { call } from '../support/app.js';
import { startGatewayStack } from '../support/chat-gateway.js';
import { bodiesOf, slackHeaders, startFakeSlackApi } from '../support/fake-platforms/fake-chat.js';
import type { RecordingServer } from '../support/fake-platforms/recording-server.js';
import { useRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { createRunTimers } from '../../src/runtime/run-timers.js';
import { APPROVAL_EXPIRY_MS, STREAMED_ANSWER } from '../fixtures/chat-agents.js';

const TOKEN = 'xoxb-gateway';
const SECRET = 'slack-signing-secret';
const redis = useRedis();

async function setup(backend: 'embedded' | 'redis') {
  const fake = await startFakeSlackApi(TOKEN);
  onTestFinished(() => fake.close());
  const stack = await startGatewayStack(
    {
      SLACK_BOT_TOKEN: TOKEN,
      SLACK_SIGNING_SECRET: SECRET,
      SLACK_API_URL: `${fake.url}/api`,
      SLACK_AGENT: 'chat-agent',
      SLACK_APPROVALS_CHANNEL: 'CAPPROVALS',
      SLACK_APPROVERS: 'U0123:user,U0456:admin',
    },
    backend === 'redis' ? redis.url : undefined,
  );
  const urls = stack.replicas.map((replica) => replica.url);
  /** The replica the n-th request goes to: alternating on Redis, as a load balancer would. */
  const at = (n: number): string => urls[n % urls.length]!;
  return { fake, urls, at, stack };
}

/** POSTs a signed Slack Events API envelope. */
function sendEvent(url: string, event: Record<string, unknown>, eventId: string, headers: Record<string, string> = {}) {
  const body = JSON.stringify({ type: 'event_callback', event_id: eventId, event });
  return call(`${url}/slack/events`, { method: 'POST', body, headers: { 'Content-Type': 'application/json', ...slackHeaders(SECRET, body), ...headers } });
}

/** POSTs a press of a button of an approval message, signed with `secret` at `timestamp`. */
function press(url: string, approvalId: string, action: 'approve' | 'reject', user: string, message: { channel: string; ts: string }, secret = SECRET, timestamp?: number) {
  const payload = {
    type: 'block_actions',
    user: { id: user },
    actions: [{ action_id: action, block_id: 'agentplane_approval', value: approvalId }],
    container: { type: 'message', channel_id: message.channel, message_ts: message.ts },
  };
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  return call(`${url}/slack/interactions`, {
    method: 'POST',
    body,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...slackHeaders(secret, body, timestamp) },
  });
}

/** The approval message the gateway posted (its button value is the approval id), once it is. */
async function approvalPosted(fake: RecordingServer, where: (body: Record<string, any>) => boolean) {
  const posted = await waitFor('the approval message', () => bodiesOf(fake, 'chat.postMessage').find((body) => body.blocks && where(body)));
  const approvalId = posted.blocks.at(-1).elements[0].value as string;
  return { approvalId, posted };
}

/** The `ts` the fake answered for the chat.postMessage of `body` (it counts up from 1700000001 over posts and ephemerals). */
function tsOf(fake: RecordingServer, body: Record<string, any>): string {
  const calls = fake.callsTo('chat.postMessage');
  const position = calls.findIndex((entry) => entry.body === body);
  return `${1_700_000_001 + fake.calls.filter((entry) => entry.path.endsWith('chat.postMessage') || entry.path.endsWith('chat.postEphemeral')).indexOf(calls[position]!)}.000100`;
}

describe.each(['embedded', 'redis'] as const)('Slack chat gateway (%s)', (backend) => {
  it('a thread is a session: two turns answered in the thread; a retry and the bot’s own posts start nothing', async () => {
    const { fake, at } = await setup(backend);
    const first = { type: 'app_mention', channel: 'C1', user: 'U0123', text: '<@UBOT> hello', ts: '100.000001' };
    expect((await sendEvent(at(0), first, 'Ev1')).status).toBe(200);
    const reply1 = await waitFor('the first answer', () => bodiesOf(fake, 'chat.postMessage').find((body) => body.thread_ts === '100.000001'));
    expect(reply1).toMatchObject({ channel: 'C1', text: 'turn 1: hello' });
    // Slack's retry of the same event, the same message as a `message` event, and the bot's own post.
    expect((await sendEvent(at(1), first, 'Ev1', { 'X-Slack-Retry-Num': '1' })).status).toBe(200);
    expect((await sendEvent(at(0), { ...first, type: 'message', channel_type: 'channel', thread_ts: '100.000001' }, 'Ev1b')).status).toBe(200);
    const botPost = { type: 'message', channel: 'C1', bot_id: 'B1', user: 'UBOT', text: 'turn 1: hello', ts: '100.000002', thread_ts: '100.000001' };
    expect((await sendEvent(at(1), botPost, 'Ev2')).status).toBe(200);
    const second = { type: 'message', channel_type: 'channel', channel: 'C1', user: 'U0456', text: 'again', ts: '100.000003', thread_ts: '100.000001' };
    expect((await sendEvent(at(1), second, 'Ev3')).status).toBe(200);
    await waitFor('the second answer', () => bodiesOf(fake, 'chat.postMessage').find((body) => body.text?.startsWith('turn 2')));
    // Runs of one session run one after the other: a second run of the first message would have answered before.
    expect(bodiesOf(fake, 'chat.postMessage').map((body) => [body.thread_ts, body.text])).toEqual([
      ['100.000001', 'turn 1: hello'],
      ['100.000001', 'turn 2: again'],
    ]);
    // A thread reply in a thread that is no conversation starts none; a bad signature is 401.
    expect((await sendEvent(at(0), { ...second, thread_ts: '999.000001', ts: '999.000002' }, 'Ev4')).status).toBe(200);
    const unsigned = await call(`${at(0)}/slack/events`, { method: 'POST', json: { type: 'url_verification', challenge: 'c' }, headers: slackHeaders('wrong', '{}') });
    expect(unsigned.status).toBe(401);
    const challenge = JSON.stringify({ type: 'url_verification', challenge: 'c-123' });
    const verified = await call(`${at(1)}/slack/events`, { method: 'POST', body: challenge, headers: { 'Content-Type': 'application/json', ...slackHeaders(SECRET, challenge) } });
    expect(verified.body).toEqual({ challenge: 'c-123' });

    // Direct messages outside a thread are one conversation, answered in the channel.
    const direct = (ts: string, text: string) => ({ type: 'message', channel_type: 'im', channel: 'D1', user: 'U0123', text, ts });
    expect((await sendEvent(at(0), direct('300.000001', 'hi'), 'Ev5')).status).toBe(200);
    await waitFor('the first direct answer', () => bodiesOf(fake, 'chat.postMessage').find((body) => body.channel === 'D1'));
    expect((await sendEvent(at(1), direct('300.000002', 'more'), 'Ev6')).status).toBe(200);
    await waitFor('the second direct answer', () => bodiesOf(fake, 'chat.postMessage').find((body) => body.channel === 'D1' && body.text === 'turn 2: more'));
    expect(bodiesOf(fake, 'chat.postMessage').filter((body) => body.channel === 'D1').map((body) => [body.thread_ts, body.text])).toEqual([
      [undefined, 'turn 1: hi'],
      [undefined, 'turn 2: more'],
    ]);
  });

  it('an approval in the thread: refused for a bad signature, a stale timestamp, a user not allowed; decided once by an approver; the message edited', async () => {
    const { fake, urls, at } = await setup(backend);
    const mention = { type: 'app_mention', channel: 'C2', user: 'U0123', text: '<@UBOT> deploy v2', ts: '200.000001' };
    expect((await sendEvent(at(0), mention, 'Ev10')).status).toBe(200);
    const { approvalId, posted } = await approvalPosted(fake, (body) => body.thread_ts === '200.000001');
    expect(posted).toMatchObject({ channel: 'C2', text: 'Approval requested: Deploy deploy v2?' });
    const message = { channel: 'C2', ts: tsOf(fake, posted) };
    const approval = () => call(`${urls[0]}/api/approvals/${approvalId}`).then((answer) => answer.body);

    expect((await press(at(1), approvalId, 'approve', 'U0123', message, 'not-the-secret')).status).toBe(401);
    expect((await press(at(0), approvalId, 'approve', 'U0123', message, SECRET, Math.floor(Date.now() / 1000) - 301)).status).toBe(401);
    expect((await press(at(1), approvalId, 'approve', 'U0999', message)).status).toBe(200);
    const refusal = await waitFor('the refusal notice', () => bodiesOf(fake, 'chat.postEphemeral')[0]);
    expect(refusal).toMatchObject({ channel: 'C2', user: 'U0999', text: 'You may not decide approvals.' });
    expect((await approval()).status).toBe('pending');

    const pressed = await press(at(0), approvalId, 'approve', 'U0456', message);
    expect(pressed.status).toBe(200);
    expect(await approval()).toMatchObject({ status: 'approved', decided_by: 'slack:U0456' });
    const edit = await waitFor('the edited message', () => bodiesOf(fake, 'chat.update')[0]);
    expect(edit).toMatchObject({ channel: 'C2', ts: message.ts, text: 'Approved by <@U0456>: Deploy deploy v2?' });
    expect(JSON.stringify(edit.blocks)).not.toContain('"actions"');
    await waitFor('the run’s answer', () => bodiesOf(fake, 'chat.postMessage').find((body) => body.text === 'deployed' && body.thread_ts === '200.000001'));

    // The same press again (a replay within the window) and a second press: nothing changes.
    expect((await press(at(1), approvalId, 'approve', 'U0456', message)).status).toBe(200);
    expect((await press(at(0), approvalId, 'reject', 'U0123', message)).status).toBe(200);
    await waitFor('two more refusal notices', () => bodiesOf(fake, 'chat.postEphemeral').length === 3);
    expect(bodiesOf(fake, 'chat.postEphemeral').slice(1).map((body) => body.text)).toEqual(['This approval was already decided.', 'This approval was already decided.']);
    expect(await approval()).toMatchObject({ status: 'approved', decided_by: 'slack:U0456' });
    expect(fake.callsTo('chat.update')).toHaveLength(1);
  });

  it('a decision with a comment: the Comment button opens a modal for approvers only, its submission decides with the comment', async () => {
    const { fake, urls, at } = await setup(backend);
    expect((await sendEvent(at(0), { type: 'app_mention', channel: 'C6', user: 'U0123', text: '<@UBOT> deploy v6', ts: '600.000001' }, 'Ev30')).status).toBe(200);
    const { approvalId, posted } = await approvalPosted(fake, (body) => body.thread_ts === '600.000001');
    expect(posted.blocks.at(-1).elements.map((button: any) => button.action_id)).toEqual(['approve', 'reject', 'comment']);
    const ts = tsOf(fake, posted);
    const interact = (url: string, payload: object) => {
      const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
      return call(`${url}/slack/interactions`, { method: 'POST', body, headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...slackHeaders(SECRET, body) } });
    };
    const comment = (user: string) => ({ type: 'block_actions', user: { id: user }, trigger_id: `trig-${user}`, actions: [{ action_id: 'comment', block_id: 'agentplane_approval', value: approvalId }], container: { channel_id: 'C6', message_ts: ts } });
    expect((await interact(at(1), comment('U0999'))).status).toBe(200);
    await waitFor('the refusal notice', () => bodiesOf(fake, 'chat.postEphemeral').find((body) => body.user === 'U0999'));
    expect(fake.callsTo('views.open')).toHaveLength(0);
    expect((await interact(at(0), comment('U0123'))).status).toBe(200);
    const opened = await waitFor('the modal', () => bodiesOf(fake, 'views.open')[0]);
    expect(opened).toMatchObject({ trigger_id: 'trig-U0123', view: { type: 'modal', callback_id: 'agentplane_decision' } });
    const submission = (user: string, choice: string, text: string) => ({
      type: 'view_submission',
      user: { id: user },
      view: {
        callback_id: 'agentplane_decision',
        private_metadata: opened.view.private_metadata,
        state: { values: { decision: { choice: { type: 'radio_buttons', selected_option: { value: choice } } }, comment: { text: { type: 'plain_text_input', value: text } } } },
      },
    });
    const refused = await interact(at(1), submission('U0999', 'approve', 'sneaky'));
    expect(refused.body).toEqual({ response_action: 'errors', errors: { decision: 'You may not decide approvals.' } });
    const submitted = await interact(at(1), submission('U0123', 'reject', 'not on a Friday'));
    expect(submitted.status).toBe(200);
    expect(submitted.body).toBeUndefined();
    expect((await call(`${urls[0]}/api/approvals/${approvalId}`)).body).toMatchObject({ status: 'rejected', comment: 'not on a Friday', decided_by: 'slack:U0123' });
    const edit = await waitFor('the edited message', () => bodiesOf(fake, 'chat.update').find((body) => body.ts === ts));
    expect(edit.text).toBe('Rejected by <@U0123>: Deploy deploy v6?');
    expect(JSON.stringify(edit.blocks)).toContain('not on a Friday');
    const again = await interact(at(0), submission('U0456', 'approve', 'late'));
    expect(again.body).toEqual({ response_action: 'errors', errors: { decision: 'This approval was already decided.' } });
  });

  it('an answer is streamed: posted at its first token, edited at most once a second as tokens arrive, the last edit the whole answer', async () => {
    const { fake, at } = await setup(backend);
    const mention = { type: 'app_mention', channel: 'C5', user: 'U0123', text: '<@UBOT> stream please', ts: '500.000001' };
    expect((await sendEvent(at(0), mention, 'Ev20')).status).toBe(200);
    const posted = await waitFor('the first post', () => bodiesOf(fake, 'chat.postMessage').find((body) => body.thread_ts === '500.000001'));
    const ts = tsOf(fake, posted);
    await waitFor('the whole answer', () => bodiesOf(fake, 'chat.update').find((body) => body.text === STREAMED_ANSWER));
    const updates = bodiesOf(fake, 'chat.update');
    // One message, growing: each edit adds to what the one before showed, the last shows it all.
    expect(bodiesOf(fake, 'chat.postMessage')).toHaveLength(1);
    expect(STREAMED_ANSWER.startsWith(posted.text) && posted.text.length < STREAMED_ANSWER.length).toBe(true);
    expect(updates.every((body) => body.channel === 'C5' && body.ts === ts)).toBe(true);
    const shown = [posted.text, ...updates.map((body) => body.text as string)];
    for (const [index, text] of shown.slice(1).entries()) expect(text.startsWith(shown[index]!) && text.length > shown[index]!.length).toBe(true);
    expect(shown.at(-1)).toBe(STREAMED_ANSWER);
    // Throttled: fifteen tokens 100 ms apart are far fewer edits.
    expect(updates.length).toBeLessThan(STREAMED_ANSWER.split(' ').length - 1);
  });

  it('an approval that expires shows "Rejected: expired", one whose run is cancelled "Cancelled with its run", without buttons', async () => {
    const { fake, urls, at, stack } = await setup(backend);
    expect((await sendEvent(at(0), { type: 'app_mention', channel: 'C8', user: 'U0123', text: '<@UBOT> deploy expiring v8', ts: '800.000001' }, 'Ev40')).status).toBe(200);
    const expiring = await approvalPosted(fake, (body) => body.thread_ts === '800.000001');
    const expiringTs = tsOf(fake, expiring.posted);
    expect((await call(`${urls[0]}/api/approvals/${expiring.approvalId}`)).body).toMatchObject({ status: 'pending', on_timeout: 'reject' });
    // The timers swept as every second, on a clock past the approval's expiry.
    const { composition } = stack.replicas.at(-1)!;
    const clock = () => Date.now() + APPROVAL_EXPIRY_MS + 60_000;
    const timers = createRunTimers({ store: composition.backend.store, runs: composition.runs, lifecycle: composition.lifecycle, logger: composition.logger, clock });
    expect(await timers.sweep()).toBe(1);
    expect((await call(`${urls[0]}/api/approvals/${expiring.approvalId}`)).body).toMatchObject({ status: 'rejected', decided_by: 'timeout' });
    const expired = await waitFor('the expired approval’s edit', () => bodiesOf(fake, 'chat.update').find((body) => body.ts === expiringTs));
    expect(expired).toMatchObject({ channel: 'C8', text: 'Rejected: expired: Deploy deploy expiring v8?' });
    expect(JSON.stringify(expired.blocks)).not.toContain('"actions"');
    await waitFor('the run’s answer', () => bodiesOf(fake, 'chat.postMessage').find((body) => body.text === 'not deployed' && body.thread_ts === '800.000001'));

    expect((await sendEvent(at(1), { type: 'app_mention', channel: 'C8', user: 'U0123', text: '<@UBOT> deploy v9', ts: '810.000001' }, 'Ev41')).status).toBe(200);
    const cancelling = await approvalPosted(fake, (body) => body.thread_ts === '810.000001');
    const cancellingTs = tsOf(fake, cancelling.posted);
    const { run_id: runId } = (await call(`${urls[0]}/api/approvals/${cancelling.approvalId}`)).body;
    expect((await call(`${urls.at(-1)}/api/runs/${runId}/cancel`, { method: 'POST' })).status).toBe(200);
    const cancelled = await waitFor('the cancelled approval’s edit', () => bodiesOf(fake, 'chat.update').find((body) => body.ts === cancellingTs));
    expect(cancelled).toMatchObject({ channel: 'C8', text: 'Cancelled with its run: Deploy deploy v9?' });
    expect(JSON.stringify(cancelled.blocks)).not.toContain('"actions"');
    expect((await call(`${urls[0]}/api/approvals/${cancelling.approvalId}`)).body.status).toBe('cancelled');
    expect(fake.callsTo('chat.update')).toHaveLength(2);
  });

  it('a run not started from Slack asks in the approvals channel; decided through the API, the message is edited', async () => {
    const { fake, urls } = await setup(backend);
    const started = await call(`${urls[0]}/api/runs`, { method: 'POST', json: { agent_id: 'human-review', input: { topic: 'news' } } });
    expect(started.status).toBe(202);
    const { approvalId, posted } = await approvalPosted(fake, (body) => body.channel === 'CAPPROVALS');
    expect(posted.thread_ts).toBeUndefined();
    expect(posted.text).toBe('Approval requested: Publish the draft?');
    const answered = await call(`${urls.at(-1)}/api/approval/respond`, { method: 'POST', json: { id: approvalId, approved: false } });
    expect(answered.status).toBe(200);
    const edit = await waitFor('the edited message', () => bodiesOf(fake, 'chat.update')[0]);
    expect(edit).toMatchObject({ channel: 'CAPPROVALS', ts: tsOf(fake, posted) });
    expect(edit.text).toMatch(/^Rejected by .+: Publish the draft\?$/);
    await waitFor('the run to end', async () => (await call(`${urls[0]}/api/runs/${started.body.run_id}`)).body.status === 'completed');
    expect(fake.callsTo('chat.update')).toHaveLength(1);
    expect(fake.callsTo('chat.postMessage')).toHaveLength(1);
  });
});
