import { createHmac } from 'node:crypto';
import { RecordingServer, type RecordedCall } from './recording-server.js';

/**
 * A fake Slack Web API for the chat gateway: chat.postMessage (answers a fresh `ts`),
 * chat.update and chat.postEphemeral, each needing `Authorization: Bearer <botToken>`.
 */
export async function startFakeSlackApi(botToken: string): Promise<RecordingServer> {
  let ts = 1_700_000_000;
  return RecordingServer.start((call) => {
    if (call.headers.authorization !== `Bearer ${botToken}`) return { status: 200, body: { ok: false, error: 'invalid_auth' } };
    const body = (call.body ?? {}) as { channel?: string; ts?: string };
    if (call.path === '/api/chat.postMessage') return { status: 200, body: { ok: true, channel: body.channel, ts: `${++ts}.000100` } };
    if (call.path === '/api/chat.update') return { status: 200, body: { ok: true, channel: body.channel, ts: body.ts } };
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
