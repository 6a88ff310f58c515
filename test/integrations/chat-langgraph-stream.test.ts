import { describe, expect, it, onTestFinished } from 'vitest';
import { call } from '../support/app.js';
import { startGatewayStack } from '../support/chat-gateway.js';
import { bodiesOf, slackHeaders, startFakeSlackApi } from '../support/fake-platforms/fake-chat.js';
import { useRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { STREAMED_ANSWER } from '../fixtures/chat-agents.js';
import { chatAgentsAndGraph } from '../fixtures/chat-graph.js';

const TOKEN = 'xoxb-graph';
const SECRET = 'slack-signing-secret';
const redis = useRedis();

/**
 * A LangGraph graph answering in Slack: its chat model's tokens (`messages` events) stream into
 * the thread as the native agents' `token` events do, embedded and on Redis (two API replicas
 * and a worker).
 */
describe.each(['embedded', 'redis'] as const)('a LangGraph graph answering in chat (%s)', (backend) => {
  it("the model's tokens stream: posted at the first, edited at most once a second as they arrive, the last edit the whole answer", async () => {
    const fake = await startFakeSlackApi(TOKEN);
    onTestFinished(() => fake.close());
    const env = { SLACK_BOT_TOKEN: TOKEN, SLACK_SIGNING_SECRET: SECRET, SLACK_API_URL: `${fake.url}/api`, SLACK_AGENT: 'chat-graph' };
    const { replicas } = await startGatewayStack(env, backend === 'redis' ? redis.url : undefined, chatAgentsAndGraph);
    const body = JSON.stringify({ type: 'event_callback', event_id: 'EvG1', event: { type: 'app_mention', channel: 'C9', user: 'U1', text: '<@UBOT> hello', ts: '900.000001' } });
    const sent = await call(`${replicas[0]!.url}/slack/events`, { method: 'POST', body, headers: { 'Content-Type': 'application/json', ...slackHeaders(SECRET, body) } });
    expect(sent.status).toBe(200);

    const posted = await waitFor('the first post', () => bodiesOf(fake, 'chat.postMessage').find((entry) => entry.thread_ts === '900.000001'));
    await waitFor('the whole answer', () => bodiesOf(fake, 'chat.update').find((entry) => entry.text === STREAMED_ANSWER));
    const updates = bodiesOf(fake, 'chat.update');
    // One message, growing: each edit adds to what the one before showed, the last shows it all.
    expect(bodiesOf(fake, 'chat.postMessage')).toHaveLength(1);
    expect(STREAMED_ANSWER.startsWith(posted.text) && posted.text.length < STREAMED_ANSWER.length).toBe(true);
    const shown = [posted.text as string, ...updates.map((entry) => entry.text as string)];
    for (const [index, text] of shown.slice(1).entries()) expect(text.startsWith(shown[index]!) && text.length > shown[index]!.length).toBe(true);
    expect(shown.at(-1)).toBe(STREAMED_ANSWER);
    // Throttled: some 90 tokens 20 ms apart are a few edits.
    expect(updates.length).toBeLessThan(STREAMED_ANSWER.length / 4);
  });
});
