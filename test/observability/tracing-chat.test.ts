import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { DEFAULT_TENANT } from '../../src/domain/types.js';
import { DiscordAdapter } from '../../src/integrations/discord/discord-adapter.js';
import { SlackAdapter } from '../../src/integrations/slack/slack-adapter.js';
import { TelegramAdapter } from '../../src/integrations/telegram/telegram-adapter.js';
import { TelegramApprovalBridge } from '../../src/integrations/telegram/telegram-approval-bridge.js';
import { startTracing, stopTracing } from '../../src/observability/tracing.js';
import { call, startTestApi } from '../support/app.js';
import { startGatewayStack } from '../support/chat-gateway.js';
import { mount } from '../support/chat.js';
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

/** The span of `trace` with the `agentplane.approval.decided` event of approval `id`. */
const decidedIn = (traceId: string, id: string): Promise<ReceivedSpan> =>
  received(`the decision of ${id} in trace ${traceId}`, (span) => span.traceId === traceId && span.events.some((event) => event.name === 'agentplane.approval.decided' && event.attributes['agentplane.approval.id'] === id));

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
    // The decision itself is an event in the press's trace.
    await decidedIn(PLATFORM_TRACE, approvalId);
  });
});

describe('OpenTelemetry traces of the library chat adapters, mounted on an app of your own', () => {
  /** A Koa app of the test's own (no server spans) serving `middleware`, closed when the test ends. */
  async function mounted(...middleware: Parameters<typeof mount>) {
    const server = await mount(...middleware);
    onTestFinished(() => server.close());
    return server.url;
  }

  it("SlackAdapter, DiscordAdapter and TelegramAdapter continue the platform's traceparent: a server span per delivery, the run its handler starts under it", async () => {
    const api = await startTestApi();
    onTestFinished(() => api.close());
    /** The handlers start a run on a session of their platform's. */
    const startRun = async (session: string, text: string) => {
      await api.composition.runs.startRun(DEFAULT_TENANT, { agent_id: 'echo', session_id: session, input: { text } });
      return '';
    };

    const slackApi = await startFakeSlackApi('xoxb-library');
    onTestFinished(() => slackApi.close());
    const slack = new SlackAdapter({ botToken: 'xoxb-library', signingSecret: SLACK_SECRET, apiBaseUrl: `${slackApi.url}/api`, handler: (message) => startRun('library-slack', message.text) });
    onTestFinished(() => slack.stop());
    const discordApi = await startFakeDiscordApi('discord-library');
    onTestFinished(() => discordApi.close());
    const keys = discordKeys();
    const discord = new DiscordAdapter({ botToken: 'discord-library', publicKey: keys.publicHex, apiBaseUrl: discordApi.url, handler: (command) => startRun('library-discord', command.content) });
    onTestFinished(() => discord.stop());
    const telegramApi = await startFakeTelegramApi('42:library-bot');
    onTestFinished(() => telegramApi.close());
    const telegram = new TelegramAdapter({ botToken: '42:library-bot', secretToken: TELEGRAM_SECRET, apiBaseUrl: telegramApi.url, handler: (input) => startRun('library-telegram', input.text) });
    onTestFinished(() => telegram.stop());
    const url = await mounted(slack.middleware(), discord.middleware(), telegram.middleware());

    /** The adapter's span under the platform's `parent`, and the run its handler started under that span. */
    const continued = async (name: string, parent: string, session: string) => {
      const span = await received(`the ${name} span`, (s) => s.name === name && s.parentSpanId === parent);
      expect(span).toMatchObject({ traceId: PLATFORM_TRACE, kind: 2 });
      const run = await received(`the run of ${name}`, (s) => s.name === 'run echo' && s.parentSpanId === span.spanId);
      expect(run.traceId).toBe(PLATFORM_TRACE);
      expect(run.attributes['agentplane.session.id']).toBe(session);
    };

    const event = JSON.stringify({ type: 'event_callback', event_id: 'EvLib1', event: { type: 'message', channel: 'C1', user: 'U9', text: 'deploy it', ts: '200.1' } });
    const slackAck = await call(`${url}/slack/events`, { method: 'POST', body: event, headers: { 'Content-Type': 'application/json', traceparent: traceparent('5000000000000005'), ...slackHeaders(SLACK_SECRET, event) } });
    expect(slackAck.status).toBe(200);
    await continued('slack event', '5000000000000005', 'library-slack');

    const command = JSON.stringify({ type: 2, id: 'i2', application_id: '1', token: 't', channel_id: '300', member: { user: { id: '111' } }, data: { name: 'ask', options: [{ name: 'text', value: 'hello' }] } });
    const discordAck = await call(`${url}/discord/interactions`, {
      method: 'POST',
      body: command,
      headers: { 'Content-Type': 'application/json', traceparent: traceparent('6000000000000006'), ...discordHeaders(keys.privateKey, command) },
    });
    expect(discordAck.status).toBe(200);
    await continued('discord interaction', '6000000000000006', 'library-discord');

    const update = { update_id: 7, message: { message_id: 1, chat: { id: 77 }, from: { id: 501, is_bot: false }, date: 1, text: 'hi' } };
    const telegramAck = await call(`${url}/telegram/webhook`, { method: 'POST', json: update, headers: { 'X-Telegram-Bot-Api-Secret-Token': TELEGRAM_SECRET, traceparent: traceparent('7000000000000007') } });
    expect(telegramAck.status).toBe(200);
    await continued('telegram update', '7000000000000007', 'library-telegram');
  });

  it("a press of TelegramApprovalBridge's button, pushed to TelegramAdapter, continues the platform's trace; the resumed run is linked to it", async () => {
    const api = await startTestApi();
    onTestFinished(() => api.close());
    const telegramApi = await startFakeTelegramApi('43:approvals-bot');
    onTestFinished(() => telegramApi.close());
    const telegram = new TelegramAdapter({ botToken: '43:approvals-bot', secretToken: TELEGRAM_SECRET, apiBaseUrl: telegramApi.url, handler: () => '' });
    onTestFinished(() => telegram.stop());
    const chatId = -1001;
    const bridge = new TelegramApprovalBridge({ telegram, runControl: api.composition.runs, chatId, approvals: api.backend.store.approvals });
    telegram.onCallbackQuery((query) => bridge.handleCallbackQuery(query));
    const url = await mounted(telegram.middleware());

    const { run_id: runId } = await api.composition.runs.startRun(DEFAULT_TENANT, { agent_id: 'human-review', input: { topic: 'release notes' } });
    await waitFor('the run to wait for approval', async () => (await call(`${api.url}/api/runs/${runId}`)).body.status === 'interrupted');
    expect(await bridge.postPending()).toBe(1);
    const prompt = bodiesOf(telegramApi, 'sendMessage')[0]!;
    const approve = prompt.reply_markup.inline_keyboard[0][0].callback_data as string;
    const [approval] = (await call(`${api.url}/api/approval/pending`)).body.pending as { id: string }[];

    const press = { update_id: 8, callback_query: { id: 'press-1', from: { id: 501, is_bot: false, first_name: 'Grace' }, message: { message_id: 701, chat: { id: chatId }, date: 1, text: 'Approval requested' }, data: approve } };
    const pushed = await call(`${url}/telegram/webhook`, { method: 'POST', json: press, headers: { 'X-Telegram-Bot-Api-Secret-Token': TELEGRAM_SECRET, traceparent: traceparent('8000000000000008') } });
    expect(pushed.status).toBe(200);
    const span = await received('the span of the press', (s) => s.name === 'telegram update' && s.parentSpanId === '8000000000000008');
    expect(span).toMatchObject({ traceId: PLATFORM_TRACE, kind: 2 });
    const resume = await received('the resumed run', (s) => s.name === 'run human-review' && s.attributes['agentplane.approval.id'] === approval!.id);
    expect(resume).toMatchObject({ parentSpanId: '', kind: 5 });
    expect(resume.attributes['agentplane.run.id']).toBe(runId);
    expect(resume.links).toContainEqual({ traceId: PLATFORM_TRACE, spanId: span.spanId, attributes: { 'agentplane.link': 'approval', 'agentplane.approval.id': approval!.id } });
    // The decision itself is an event in the press's trace, under its span, although the span ended with the ack.
    const decided = await decidedIn(PLATFORM_TRACE, approval!.id);
    expect(decided).toMatchObject({ name: 'approval decided', parentSpanId: span.spanId });
  });
});
