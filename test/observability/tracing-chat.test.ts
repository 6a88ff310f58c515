import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startTracing, stopTracing } from '../../src/observability/tracing.js';
import { call } from '../support/app.js';
import { startGatewayStack } from '../support/chat-gateway.js';
import { bodiesOf, discordHeaders, discordKeys, slackHeaders, startFakeDiscordApi, startFakeSlackApi, startFakeTelegramApi } from '../support/fake-platforms/fake-chat.js';
import { spanReceived, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { waitFor } from '../support/wait.js';

const SLACK_SECRET = 'slack-signing-secret';
const TELEGRAM_SECRET = 'telegram_secret-1';
/** The platform's trace (a proxy or an API gateway in front of us that sends `traceparent`). */
const PLATFORM_TRACE = '5c0fc1a8e2d94b6f9a7e3d2c1b0a9f8e';
const traceparent = (span: string) => `00-${PLATFORM_TRACE}-${span}-01`;

let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
  expect(startTracing('embedded')).toBe(true);
});
afterAll(async () => {
  await stopTracing();
  await receiver.close();
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
});

const received = (what: string, match: (span: ReceivedSpan) => boolean): Promise<ReceivedSpan> => spanReceived(receiver, what, match);

/** The gateway of an embedded API with the three platforms on fakes of their APIs. */
async function gateway() {
  const slack = await startFakeSlackApi('xoxb-gateway');
  onTestFinished(() => slack.close());
  const discord = await startFakeDiscordApi('discord-bot');
  onTestFinished(() => discord.close());
  const telegram = await startFakeTelegramApi('42:gateway-bot');
  onTestFinished(() => telegram.close());
  const keys = discordKeys();
  const stack = await startGatewayStack({
    SLACK_BOT_TOKEN: 'xoxb-gateway',
    SLACK_SIGNING_SECRET: SLACK_SECRET,
    SLACK_API_URL: `${slack.url}/api`,
    SLACK_AGENT: 'chat-agent',
    SLACK_APPROVERS: 'U0123:user',
    DISCORD_BOT_TOKEN: 'discord-bot',
    DISCORD_PUBLIC_KEY: keys.publicHex,
    DISCORD_API_URL: discord.url,
    DISCORD_AGENT: 'chat-agent',
    TELEGRAM_BOT_TOKEN: '42:gateway-bot',
    TELEGRAM_SECRET_TOKEN: TELEGRAM_SECRET,
    TELEGRAM_API_URL: telegram.url,
    TELEGRAM_AGENT: 'chat-agent',
  });
  return { url: stack.replicas[0]!.url, slack, keys };
}

/** The server span of a request the platform sent from `parent`, and the run it started under it. */
async function continued(route: string, parent: string, session: string): Promise<{ server: ReceivedSpan; run: ReceivedSpan }> {
  const server = await received(`the server span of ${route}`, (span) => span.parentSpanId === parent && span.traceId === PLATFORM_TRACE);
  expect(server).toMatchObject({ name: `POST ${route}`, kind: 2 });
  expect(server.attributes).toMatchObject({ 'http.route': route, 'http.response.status_code': 200 });
  const run = await received(`the run of ${route}`, (span) => span.name === 'run chat-agent' && span.parentSpanId === server.spanId);
  expect(run.traceId).toBe(PLATFORM_TRACE);
  expect(run.attributes['agentplane.session.id']).toBe(session);
  return { server, run };
}

describe("OpenTelemetry traces of the chat gateway's endpoints", () => {
  it("continues the platform's traceparent on /slack/*, /discord/* and /telegram/*: a server span per request, the run it starts under it; a press's resume is linked to it", async () => {
    const { url, slack, keys } = await gateway();

    const event = JSON.stringify({ type: 'event_callback', event_id: 'Ev1', event: { type: 'app_mention', channel: 'C1', user: 'U9', text: '<@B1> deploy it', ts: '100.1' } });
    const slackHeadersOf = (body: string, span: string) => ({ 'Content-Type': 'application/json', traceparent: traceparent(span), ...slackHeaders(SLACK_SECRET, body) });
    expect((await call(`${url}/slack/events`, { method: 'POST', body: event, headers: slackHeadersOf(event, '1000000000000001') })).status).toBe(200);
    const mention = await continued('/slack/events', '1000000000000001', 'slack:C1:100.1');

    const command = JSON.stringify({ type: 2, id: 'i1', application_id: '1', token: 't', channel_id: '300', member: { user: { id: '111' } }, data: { name: 'ask', options: [{ name: 'text', value: 'hello' }] } });
    const discordAnswer = await call(`${url}/discord/interactions`, {
      method: 'POST',
      body: command,
      headers: { 'Content-Type': 'application/json', traceparent: traceparent('2000000000000002'), ...discordHeaders(keys.privateKey, command) },
    });
    expect(discordAnswer.status).toBe(200);
    await continued('/discord/interactions', '2000000000000002', 'discord:300');

    const update = { update_id: 1, message: { message_id: 1, chat: { id: 77 }, from: { id: 501, is_bot: false }, date: 1, text: 'hello' } };
    const pushed = await call(`${url}/telegram/webhook`, { method: 'POST', json: update, headers: { 'X-Telegram-Bot-Api-Secret-Token': TELEGRAM_SECRET, traceparent: traceparent('3000000000000003') } });
    expect(pushed.status).toBe(200);
    await continued('/telegram/webhook', '3000000000000003', 'telegram:77');

    // The press of Approve: its request continues the platform's trace; the resume is linked to it and to the run's trace.
    const posted = await waitFor('the approval message', () => bodiesOf(slack, 'chat.postMessage').find((body) => body.blocks));
    const approvalId = posted.blocks.at(-1).elements[0].value as string;
    const payload = { type: 'block_actions', user: { id: 'U0123' }, actions: [{ action_id: 'approve', block_id: 'agentplane_approval', value: approvalId }], container: { type: 'message', channel_id: 'C1', message_ts: '1700000001.000100' } };
    const form = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const pressed = await call(`${url}/slack/interactions`, { method: 'POST', body: form, headers: { ...slackHeadersOf(form, '4000000000000004'), 'Content-Type': 'application/x-www-form-urlencoded' } });
    expect(pressed.status).toBe(200);
    const press = await received('the server span of the press', (span) => span.parentSpanId === '4000000000000004');
    expect(press).toMatchObject({ name: 'POST /slack/interactions', traceId: PLATFORM_TRACE, kind: 2 });
    const resume = await received('the resumed run', (span) => span.name === 'run chat-agent' && span.attributes['agentplane.approval.id'] === approvalId);
    expect(resume).toMatchObject({ parentSpanId: '', kind: 5 });
    expect(resume.attributes['agentplane.run.id']).toBe(mention.run.attributes['agentplane.run.id']);
    expect(resume.links).toEqual(
      expect.arrayContaining([
        { traceId: PLATFORM_TRACE, spanId: press.spanId, attributes: { 'agentplane.link': 'approval', 'agentplane.approval.id': approvalId } },
        expect.objectContaining({ traceId: PLATFORM_TRACE, attributes: { 'agentplane.link': 'run' } }),
      ]),
    );
  });
});
