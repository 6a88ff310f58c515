import { createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { RecordingServer, type RecordedCall } from './recording-server.js';

/**
 * A fake Slack Web API for the chat gateway: chat.postMessage (answers a fresh `ts`),
 * chat.update, chat.postEphemeral and views.open, each needing `Authorization: Bearer <botToken>`.
 */
export async function startFakeSlackApi(botToken: string): Promise<RecordingServer> {
  let ts = 1_700_000_000;
  return RecordingServer.start((call) => {
    if (call.headers.authorization !== `Bearer ${botToken}`) return { status: 200, body: { ok: false, error: 'invalid_auth' } };
    const body = (call.body ?? {}) as { channel?: string; ts?: string };
    if (call.path === '/api/chat.postMessage') return { status: 200, body: { ok: true, channel: body.channel, ts: `${++ts}.000100` } };
    if (call.path === '/api/chat.update') return { status: 200, body: { ok: true, channel: body.channel, ts: body.ts } };
    if (call.path === '/api/views.open') return { status: 200, body: { ok: true, view: { id: 'V1' } } };
    if (call.path === '/api/chat.postEphemeral') return { status: 200, body: { ok: true, message_ts: `${++ts}.000200` } };
    return { status: 404, body: { ok: false, error: 'unknown_method' } };
  });
}

/** Slack's v0 signature headers over `body`, at `timestamp` (seconds; default now). */
export function slackHeaders(secret: string, body: string, timestamp = Math.floor(Date.now() / 1000)): Record<string, string> {
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return { 'X-Slack-Signature': signature, 'X-Slack-Request-Timestamp': String(timestamp) };
}

/** The body of calls to `method` (path suffix) of a fake, in arrival order. */
export function bodiesOf(fake: RecordingServer, method: string): Record<string, any>[] {
  return fake.callsTo(method).map((call: RecordedCall) => call.body as Record<string, any>);
}

/**
 * A fake Discord API for the chat gateway: POST /channels/{id}/messages (answers a fresh
 * message id) and PATCH /channels/{id}/messages/{id}, each needing `Authorization: Bot <botToken>`.
 */
export async function startFakeDiscordApi(botToken: string): Promise<RecordingServer> {
  let id = 9_000;
  return RecordingServer.start((call) => {
    if (call.headers.authorization !== `Bot ${botToken}`) return { status: 401, body: { message: '401: Unauthorized', code: 0 } };
    const channel = /^\/channels\/(\d+)\/messages(?:\/(\d+))?$/.exec(call.path);
    if (channel && call.method === 'POST' && !channel[2]) return { status: 200, body: { id: String(++id), channel_id: channel[1] } };
    if (channel && call.method === 'PATCH' && channel[2]) return { status: 200, body: { id: channel[2], channel_id: channel[1] } };
    return { status: 404, body: { message: 'Unknown', code: 0 } };
  });
}

/** Discord's Ed25519 headers for `body`, signed with `privateKey` at `timestamp` (seconds; default now). */
export function discordHeaders(privateKey: KeyObject, body: string, timestamp = Math.floor(Date.now() / 1000)): Record<string, string> {
  return { 'X-Signature-Ed25519': sign(null, Buffer.from(`${timestamp}${body}`), privateKey).toString('hex'), 'X-Signature-Timestamp': String(timestamp) };
}

/** A Discord application's key pair: the public key as DISCORD_PUBLIC_KEY wants it (hex). */
export function discordKeys(): { publicHex: string; privateKey: KeyObject } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { publicHex: Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('hex'), privateKey };
}

/**
 * A fake Telegram Bot API for the chat gateway: sendMessage (answers a fresh message_id),
 * editMessageText and answerCallbackQuery at `/bot<token>/<method>`. As Telegram does, a
 * message whose inline keyboard has a button's callback_data outside 1-64 bytes is refused
 * (400 `BUTTON_DATA_INVALID`).
 */
export async function startFakeTelegramApi(botToken: string): Promise<RecordingServer> {
  let id = 700;
  return RecordingServer.start((call) => {
    const method = call.path.startsWith(`/bot${botToken}/`) ? call.path.slice(`/bot${botToken}/`.length) : undefined;
    const body = (call.body ?? {}) as { chat_id?: number; reply_markup?: { inline_keyboard?: { callback_data?: string }[][] } };
    const buttons = (body.reply_markup?.inline_keyboard ?? []).flat();
    const outOfBounds = (data: string | undefined) => data !== undefined && (Buffer.byteLength(data) < 1 || Buffer.byteLength(data) > 64);
    if (buttons.some((button) => outOfBounds(button.callback_data))) {
      return { status: 400, body: { ok: false, error_code: 400, description: 'Bad Request: BUTTON_DATA_INVALID' } };
    }
    if (method === 'sendMessage') return { status: 200, body: { ok: true, result: { message_id: ++id, chat: { id: body.chat_id }, date: 1 } } };
    if (method === 'editMessageText' || method === 'answerCallbackQuery') return { status: 200, body: { ok: true, result: true } };
    return { status: 404, body: { ok: false, error_code: 404, description: 'Not Found' } };
  });
}
