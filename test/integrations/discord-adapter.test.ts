import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { verifyKey } from 'discord-interactions';
import { describe, expect, it } from 'vitest';
import { DISCORD_FAILURE_TEXT, DiscordAdapter, type DiscordCommand, type DiscordHandler } from '../../src/integrations/discord/discord-adapter.js';
import { DISCORD_API_PREFIX, discordRateLimited, startFakeDiscord } from '../support/fake-platforms/fake-discord.js';
import { waitFor } from '../support/wait.js';
import { expectStopWaitsForHandler, mountAdapter } from '../support/chat.js';

const BOT_TOKEN = 'discord-bot-token';

function keyPair(): { publicHex: string; privateKey: KeyObject } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return { publicHex: raw.toString('hex'), privateKey };
}

/** Discord's headers for `body`, signed with node:crypto. */
function signed(privateKey: KeyObject, body: string, timestampSec = Math.floor(Date.now() / 1000)): Record<string, string> {
  const timestamp = String(timestampSec);
  const signature = sign(null, Buffer.from(timestamp + body), privateKey).toString('hex');
  return { 'X-Signature-Ed25519': signature, 'X-Signature-Timestamp': timestamp };
}

function command(overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    type: 2,
    id: '900',
    application_id: 'APP1',
    token: 'interaction-token',
    channel_id: 'C1',
    member: { user: { id: 'U1' } },
    data: { name: 'ask', options: [{ name: 'topic', type: 1, options: [{ name: 'q', type: 3, value: 'hello there' }] }, { name: 'n', type: 4, value: 3 }] },
    ...overrides,
  });
}

/** The adapter mounted on a Koa app, pointed at a fake Discord. */
async function setup(handler: DiscordHandler, publicKey?: string) {
  const fake = await startFakeDiscord(BOT_TOKEN);
  return mountAdapter(fake, '/discord/interactions', (logger) =>
    new DiscordAdapter({ botToken: BOT_TOKEN, handler, publicKey, apiBaseUrl: `${fake.url}${DISCORD_API_PREFIX}`, logger }),
  );
}

function post(url: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', body, headers: { 'Content-Type': 'application/json', ...headers } });
}

describe('Discord adapter', () => {
  it('answers a ping with the pong', async () => {
    const { url, fake } = await setup(() => 'pong seen');
    const response = await post(url, '{"type":1}');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ type: 1 });
    // Replies go out after the answer: those of a command sent behind the ping are the only calls.
    expect(await (await post(url, command())).json()).toEqual({ type: 5 });
    await waitFor('the reply to the command', () => fake.calls.length >= 2);
    expect(fake.calls.map((call) => [call.method, (call.body as { content?: string } | null)?.content])).toEqual([
      ['POST', 'pong seen'],
      ['DELETE', undefined],
    ]);
  });

  it('acknowledges a command at once, runs the handler afterwards, posts the reply as the bot, then deletes "thinking…"', async () => {
    let release!: (reply: string) => void;
    const received: DiscordCommand[] = [];
    const { url, fake } = await setup((input) => {
      received.push(input);
      return new Promise<string>((resolve) => (release = resolve));
    });
    const response = await post(url, command());
    expect(await response.json()).toEqual({ type: 5 });
    await waitFor('the handler call', () => received.length === 1);
    expect(received[0]).toEqual({ channelID: 'C1', userID: 'U1', content: 'hello there 3' });
    expect(fake.calls).toHaveLength(0);

    release('General Kenobi');
    await waitFor('the @original deletion', () => fake.callsTo('/messages/@original').length === 1);
    const [post1, del] = fake.calls;
    expect(post1).toMatchObject({
      method: 'POST',
      path: `${DISCORD_API_PREFIX}/channels/C1/messages`,
      body: { content: 'General Kenobi', allowed_mentions: { parse: [] } },
    });
    expect(post1!.headers.authorization).toBe(`Bot ${BOT_TOKEN}`);
    expect(post1!.headers['content-type']).toMatch(/^application\/json/);
    expect(del).toMatchObject({ method: 'DELETE', path: `${DISCORD_API_PREFIX}/webhooks/APP1/interaction-token/messages/@original` });
    expect(del!.headers.authorization).toBeUndefined();
  });

  it('takes the user of a direct-message command from `user`', async () => {
    const received: DiscordCommand[] = [];
    const { url, fake } = await setup((input) => {
      received.push(input);
      return 'hi';
    });
    await post(url, command({ member: undefined, user: { id: 'U9' }, channel_id: undefined, channel: { id: 'DM1' }, data: { name: 'ping' } }));
    await waitFor('the reply', () => fake.callsTo('/@original').length === 1);
    expect(received).toEqual([{ channelID: 'DM1', userID: 'U9', content: '' }]);
    expect(fake.calls[0]!.path).toBe(`${DISCORD_API_PREFIX}/channels/DM1/messages`);
  });

  it('posts nothing for an empty reply and still resolves "thinking…"', async () => {
    const { url, fake } = await setup(() => '');
    await post(url, command());
    await waitFor('the @original deletion', () => fake.callsTo('/@original').length === 1);
    expect(fake.calls.map((call) => call.method)).toEqual(['DELETE']);
  });

  it('retries a 429 after its retry_after', async () => {
    const { url, fake } = await setup(() => 'after the limit');
    fake.queue((call) => call.path.endsWith('/channels/C1/messages'), discordRateLimited(0.05));
    await post(url, command());
    await waitFor('the @original deletion', () => fake.callsTo('/@original').length === 1);
    const posts = fake.callsTo('/channels/C1/messages');
    expect(posts).toHaveLength(2);
    expect(posts[1]!.body).toMatchObject({ content: 'after the limit' });
  });

  it('keeps a failing handler out of the HTTP answer and replaces "thinking…" with a failure notice', async () => {
    const { url, fake, logs } = await setup(() => {
      throw new Error('model unavailable');
    });
    const response = await post(url, command());
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ type: 5 });
    await waitFor('the @original edit', () => fake.callsTo('/@original').length === 1);
    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0]).toMatchObject({ method: 'PATCH', body: { content: DISCORD_FAILURE_TEXT } });
    expect(logs.some((log) => (log.err as { message?: string } | undefined)?.message === 'model unavailable')).toBe(true);
  });

  it('logs a refused channel post with the platform code and replaces "thinking…" with a failure notice', async () => {
    const { url, fake, logs } = await setup(() => 'no access');
    fake.queue((call) => call.method === 'POST', { status: 403, body: { message: 'Missing Access', code: 50001 } });
    await post(url, command());
    await waitFor('the @original edit', () => fake.callsTo('/@original').length === 1);
    expect(fake.callsTo('/@original')[0]).toMatchObject({ method: 'PATCH', body: { content: DISCORD_FAILURE_TEXT } });
    const logged = logs.find((log) => log.err !== undefined)?.err as { platformCode?: number; status?: number };
    expect(logged).toMatchObject({ platformCode: 50001, status: 403 });
    expect(JSON.stringify(logs)).not.toContain(BOT_TOKEN);
  });

  it('answers 400 to other interaction types and to bodies that are not JSON, 405 to GET', async () => {
    const { url } = await setup(() => 'unused');
    const component = await post(url, '{"type":3}');
    expect(component.status).toBe(400);
    expect(await component.json()).toEqual({ error: { code: 'bad_request', message: expect.any(String) } });
    expect((await post(url, command({ channel_id: undefined }))).status).toBe(400);
    expect((await post(url, 'not json')).status).toBe(400);
    expect((await fetch(url)).status).toBe(405);
  });

  it('stop() waits for a running handler and its reply, then refuses with 503; twice is fine', async () => {
    let release!: (reply: string) => void;
    const { url, fake, adapter } = await setup(() => new Promise<string>((resolve) => (release = resolve)));
    await post(url, command());
    await waitFor('the handler to start', () => release !== undefined);
    await expectStopWaitsForHandler(adapter, () => release('last words'));
    expect(fake.calls.map((call) => call.method)).toEqual(['POST', 'DELETE']);
    await adapter.stop();
    const refused = await post(url, '{"type":1}');
    expect(refused.status).toBe(503);
  });
});

describe('Discord signatures', () => {
  const body = command();

  it('accepts a valid signature that discord-interactions verifyKey accepts too', async () => {
    const { publicHex, privateKey } = keyPair();
    const headers = signed(privateKey, body);
    expect(await verifyKey(body, headers['X-Signature-Ed25519']!, headers['X-Signature-Timestamp']!, publicHex)).toBe(true);
    const { url, fake } = await setup(() => 'signed reply', publicHex);
    const response = await post(url, body, headers);
    expect(await response.json()).toEqual({ type: 5 });
    await waitFor('the reply', () => fake.callsTo('/@original').length === 1);
    const ping = await post(url, '{"type":1}', signed(privateKey, '{"type":1}'));
    expect(await ping.json()).toEqual({ type: 1 });
  });

  it('rejects a wrong key, a tampered body, a stale timestamp and missing headers with 401 without calling the handler', async () => {
    const { publicHex, privateKey } = keyPair();
    const other = keyPair();
    let calls = 0;
    const { url } = await setup(() => {
      calls++;
      return 'never';
    }, publicHex);
    const staleSec = Math.floor(Date.now() / 1000) - 600;
    const good = signed(privateKey, body);
    const cases: [string, string, Record<string, string>][] = [
      ['wrong key', body, signed(other.privateKey, body)],
      ['tampered body', body.replace('C1', 'C2'), good],
      ['stale timestamp', body, signed(privateKey, body, staleSec)],
      ['missing signature', body, { 'X-Signature-Timestamp': good['X-Signature-Timestamp']! }],
      ['missing timestamp', body, { 'X-Signature-Ed25519': good['X-Signature-Ed25519']! }],
      ['probe ping', '{"type":1}', signed(other.privateKey, '{"type":1}')],
    ];
    for (const [name, sentBody, headers] of cases) {
      const response = await post(url, sentBody, headers);
      expect(response.status, name).toBe(401);
      expect(await response.json(), name).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
    }
    expect(await verifyKey(body, signed(other.privateKey, body)['X-Signature-Ed25519']!, good['X-Signature-Timestamp']!, publicHex)).toBe(false);
    expect(await verifyKey(body.replace('C1', 'C2'), good['X-Signature-Ed25519']!, good['X-Signature-Timestamp']!, publicHex)).toBe(false);
    // The stale request is correctly signed (verifyKey has no time window), so only its age refused it.
    const stale = signed(privateKey, body, staleSec);
    expect(await verifyKey(body, stale['X-Signature-Ed25519']!, stale['X-Signature-Timestamp']!, publicHex)).toBe(true);
    expect(calls).toBe(0);
  });

  it('refuses a public key that is not 64 hex digits at construction', () => {
    expect(() => new DiscordAdapter({ botToken: 't', handler: () => '', publicKey: 'abc' })).toThrow(TypeError);
  });
});
