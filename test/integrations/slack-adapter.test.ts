import { createHmac } from 'node:crypto';
import { describe, expect, it, onTestFinished } from 'vitest';
import { SlackAdapter, type SlackHandler, type SlackMessage } from '../../src/integrations/slack/slack-adapter.js';
import { slackSignature } from '../../src/integrations/slack/slack-signature.js';
import { SLACK_API_PREFIX, slackRateLimited, startFakeSlack } from '../support/fake-platforms/fake-slack.js';
import { waitFor } from '../support/wait.js';
import { expectStopWaitsForHandler, mountAdapter } from '../support/chat.js';

const BOT_TOKEN = 'xoxb-slack-bot-token';
const SIGNING_SECRET = 'slack-signing-secret';

/** The adapter mounted on a Koa app, pointed at a fake Slack knowing channels C1 and C2. */
async function setup(reply: SlackHandler = (message) => `re: ${message.text}`, signingSecret?: string) {
  const fake = await startFakeSlack(BOT_TOKEN, ['C1', 'C2']);
  const received: SlackMessage[] = [];
  const handler: SlackHandler = (message) => {
    received.push(message);
    return reply(message);
  };
  const mounted = await mountAdapter(fake, '/slack/events', (logger) =>
    new SlackAdapter({ botToken: BOT_TOKEN, signingSecret, apiBaseUrl: `${fake.url}${SLACK_API_PREFIX}`, logger, handler }),
  );
  return { ...mounted, received };
}

let eventCounter = 0;
function messageEvent(event: Record<string, unknown>, eventId = `Ev${++eventCounter}`): string {
  return JSON.stringify({
    type: 'event_callback',
    team_id: 'T1',
    event_id: eventId,
    event: { type: 'message', channel: 'C1', user: 'U1', text: 'hello', ts: '1700000000.000001', ...event },
  });
}

function post(url: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', body, headers: { 'Content-Type': 'application/json', ...headers } });
}

function signedHeaders(secret: string, body: string, timestampSec = Math.floor(Date.now() / 1000)): Record<string, string> {
  const signature = createHmac('sha256', secret).update(`v0:${timestampSec}:${body}`).digest('hex');
  return { 'X-Slack-Signature': `v0=${signature}`, 'X-Slack-Request-Timestamp': String(timestampSec) };
}

describe('Slack adapter', () => {
  it('answers the url_verification challenge', async () => {
    const { url, received } = await setup();
    const response = await post(url, JSON.stringify({ type: 'url_verification', token: 't', challenge: 'ch4ll3nge' }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ challenge: 'ch4ll3nge' });
    // Handlers run after the answer: a message sent behind the challenge reaches the handler alone.
    expect((await post(url, messageEvent({ text: 'after the challenge' }))).status).toBe(200);
    await waitFor('the message after the challenge', () => received.length > 0);
    expect(received.map((message) => message.text)).toEqual(['after the challenge']);
  });

  it('acknowledges a message at once, runs the handler afterwards and replies with chat.postMessage in its thread', async () => {
    let release!: (reply: string) => void;
    const { url, fake, received } = await setup(() => new Promise<string>((resolve) => (release = resolve)));
    const response = await post(url, messageEvent({ text: 'what time is it?' }));
    expect(response.status).toBe(200);
    await waitFor('the handler call', () => received.length === 1);
    expect(received[0]).toEqual({ channel: 'C1', user: 'U1', text: 'what time is it?', threadTS: '1700000000.000001' });
    expect(fake.calls).toHaveLength(0);
    release('tea time');
    const [call] = await waitFor('chat.postMessage', () => fake.calls.length === 1 && fake.calls);
    expect(call).toMatchObject({
      method: 'POST',
      path: `${SLACK_API_PREFIX}/chat.postMessage`,
      body: { channel: 'C1', text: 'tea time', thread_ts: '1700000000.000001' },
    });
    expect(call!.headers.authorization).toBe(`Bearer ${BOT_TOKEN}`);
    expect(call!.headers['content-type']).toMatch(/^application\/json/);
  });

  it('replies inside the thread a threaded message belongs to', async () => {
    const { url, fake } = await setup();
    await post(url, messageEvent({ ts: '1700000000.000009', thread_ts: '1700000000.000002' }));
    await waitFor('chat.postMessage', () => fake.calls.length === 1);
    expect(fake.calls[0]!.body).toMatchObject({ thread_ts: '1700000000.000002' });
  });

  it('ignores events that carry bot_id, edits and other subtypes', async () => {
    const { url, fake, received } = await setup();
    expect((await post(url, messageEvent({ bot_id: 'B1', text: 'from a bot' }))).status).toBe(200);
    await post(url, messageEvent({ subtype: 'message_changed', text: 'edited' }));
    await post(url, messageEvent({ type: 'reaction_added', text: 'reaction' }));
    await post(url, messageEvent({ text: 'from a person' }));
    await waitFor('the reply to the person', () => fake.calls.length === 1);
    expect(received.map((message) => message.text)).toEqual(['from a person']);
  });

  it('posts nothing when the reply is empty', async () => {
    const { url, fake, received } = await setup((message) => (message.text === 'quiet' ? '' : 'loud'));
    await post(url, messageEvent({ text: 'quiet' }));
    await post(url, messageEvent({ text: 'speak' }));
    await waitFor('the second reply', () => fake.calls.length === 1);
    expect(received).toHaveLength(2);
    expect(fake.calls[0]!.body).toMatchObject({ text: 'loud' });
  });

  it('acknowledges a retry (X-Slack-Retry-Num) of an event_id already handled without handling it again', async () => {
    const { url, fake, received } = await setup();
    const body = messageEvent({ text: 'once' }, 'EvRetried');
    await post(url, body);
    const retry = await post(url, body, { 'X-Slack-Retry-Num': '1', 'X-Slack-Retry-Reason': 'http_timeout' });
    expect(retry.status).toBe(200);
    await post(url, messageEvent({ text: 'sentinel' }));
    await waitFor('both replies', () => fake.calls.length === 2);
    expect(received.map((message) => message.text)).toEqual(['once', 'sentinel']);
  });

  it('logs {ok:false,error} from the Web API as an error with the platform code, never the token', async () => {
    const { url, logs } = await setup();
    await post(url, messageEvent({ channel: 'C404' }));
    const logged = await waitFor('the error log', () => logs.find((log) => log.level === 50));
    expect(logged).toMatchObject({ slack_error: 'channel_not_found', channel: 'C404', err: { platformCode: 'channel_not_found' } });
    expect(JSON.stringify(logs)).not.toContain(BOT_TOKEN);
  });

  it('retries chat.postMessage after a 429', async () => {
    const { url, fake } = await setup();
    fake.queue(() => true, slackRateLimited(0));
    await post(url, messageEvent({ text: 'busy' }));
    await waitFor('the retried post', () => fake.calls.length === 2);
    expect(fake.calls.map((call) => call.body)).toEqual([
      expect.objectContaining({ text: 're: busy' }),
      expect.objectContaining({ text: 're: busy' }),
    ]);
  });

  it('keeps a failing handler out of the HTTP answer', async () => {
    const { url, logs } = await setup(() => {
      throw new Error('handler exploded');
    });
    const response = await post(url, messageEvent({}));
    expect(response.status).toBe(200);
    await waitFor('the error log', () => logs.some((log) => (log.err as { message?: string } | undefined)?.message === 'handler exploded'));
  });

  it('answers 400 to a malformed event, 405 to GET, and acknowledges other envelopes', async () => {
    const { url } = await setup();
    expect((await post(url, JSON.stringify({ type: 'event_callback', event: {} }))).status).toBe(400);
    expect((await post(url, 'not json')).status).toBe(400);
    expect((await fetch(url)).status).toBe(405);
    expect((await post(url, JSON.stringify({ type: 'app_rate_limited', minute_rate_limited: 1 }))).status).toBe(200);
  });

  it('serves /slack/events on its own server from start(address) until stop(), which awaits the running handler', async () => {
    const fake = await startFakeSlack(BOT_TOKEN, ['C1']);
    onTestFinished(() => fake.close());
    let release!: (reply: string) => void;
    const adapter = new SlackAdapter({
      botToken: BOT_TOKEN,
      apiBaseUrl: `${fake.url}${SLACK_API_PREFIX}`,
      handler: () => new Promise<string>((resolve) => (release = resolve)),
    });
    const server = await adapter.start({ port: 0, host: '127.0.0.1' });
    expect((await post(`${server.url}/slack/events`, messageEvent({}))).status).toBe(200);
    expect((await post(`${server.url}/other`, messageEvent({}))).status).toBe(404);
    await waitFor('the handler to start', () => release !== undefined);
    await expectStopWaitsForHandler(adapter, () => release('bye'));
    expect(fake.calls).toHaveLength(1);
    await expect(post(`${server.url}/slack/events`, messageEvent({}))).rejects.toThrow();
    await adapter.stop();
  });
});

describe('Slack signatures', () => {
  it("matches the example of Slack's documentation", () => {
    const body =
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    const verify = slackSignature('8f742231b10e8888abcd99yyyzzz85a5', { now: () => 1531420618 * 1000 });
    const headers = {
      'x-slack-signature': 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
      'x-slack-request-timestamp': '1531420618',
    };
    expect(verify(Buffer.from(body), headers)).toEqual({ ok: true });
  });

  it('accepts a valid v0 signature and rejects a wrong secret, a tampered body, a stale timestamp and a missing header with 401', async () => {
    const { url, fake, received } = await setup(undefined, SIGNING_SECRET);
    const body = messageEvent({ text: 'signed' });
    const staleSec = Math.floor(Date.now() / 1000) - 301;
    const cases: [string, string, Record<string, string>][] = [
      ['wrong secret', body, signedHeaders('another-secret', body)],
      ['tampered body', body.replace('signed', 'signeD'), signedHeaders(SIGNING_SECRET, body)],
      ['stale timestamp', body, signedHeaders(SIGNING_SECRET, body, staleSec)],
      ['missing signature', body, { 'X-Slack-Request-Timestamp': String(Math.floor(Date.now() / 1000)) }],
      ['unsigned challenge', JSON.stringify({ type: 'url_verification', challenge: 'x' }), {}],
    ];
    for (const [name, sentBody, headers] of cases) {
      const response = await post(url, sentBody, headers);
      expect(response.status, name).toBe(401);
      expect(await response.json(), name).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
    }
    expect((await post(url, body, signedHeaders(SIGNING_SECRET, body))).status).toBe(200);
    await waitFor('the reply', () => fake.calls.length === 1);
    expect(received.map((message) => message.text)).toEqual(['signed']);
  });
});
