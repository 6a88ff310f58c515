import { RecordingServer, type Answer } from './recording-server.js';

/** Where the adapter must be pointed: the fake serves the Web API under `/api`. */
export const SLACK_API_PREFIX = '/api';

/**
 * A fake Slack Web API: chat.postMessage needs `Authorization: Bearer <botToken>` and a
 * channel in `channels`, and answers like Slack, HTTP 200 with `{ok:true,…}` or
 * `{ok:false,error}`.
 */
export function startFakeSlack(botToken: string, channels: readonly string[]): Promise<RecordingServer> {
  let ts = 1_700_000_000;
  return RecordingServer.start((call) => {
    if (call.path !== `${SLACK_API_PREFIX}/chat.postMessage` || call.method !== 'POST') {
      return { status: 404, body: { ok: false, error: 'unknown_method' } };
    }
    if (call.headers.authorization !== `Bearer ${botToken}`) return { status: 200, body: { ok: false, error: 'invalid_auth' } };
    const { channel, text } = (call.body ?? {}) as { channel?: string; text?: string };
    if (channel === undefined || !channels.includes(channel)) return { status: 200, body: { ok: false, error: 'channel_not_found' } };
    ts++;
    return { status: 200, body: { ok: true, channel, ts: `${ts}.000100`, message: { text, ts: `${ts}.000100` } } };
  });
}

/** Slack's rate-limit answer: HTTP 429 with Retry-After in seconds. */
export function slackRateLimited(retryAfterSec: number): Answer {
  return { status: 429, headers: { 'Retry-After': String(retryAfterSec) }, body: { ok: false, error: 'ratelimited' } };
}
