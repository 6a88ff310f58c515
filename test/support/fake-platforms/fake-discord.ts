import { RecordingServer, type Answer } from './recording-server.js';

/** Where the adapter must be pointed: the fake answers under Discord's versioned prefix. */
export const DISCORD_API_PREFIX = '/api/v10';

/**
 * A fake Discord API: channel messages need `Authorization: Bot <botToken>`, and the
 * interaction webhook's `@original` message can be edited or deleted. Unknown paths get
 * Discord's 404 body.
 */
export function startFakeDiscord(botToken: string): Promise<RecordingServer> {
  return RecordingServer.start((call) => {
    const channel = new RegExp(`^${DISCORD_API_PREFIX}/channels/([^/]+)/messages$`).exec(call.path);
    if (channel && call.method === 'POST') {
      if (call.headers.authorization !== `Bot ${botToken}`) return { status: 401, body: { message: '401: Unauthorized', code: 0 } };
      return { status: 200, body: { id: '1100', channel_id: channel[1], content: (call.body as { content?: string }).content } };
    }
    if (new RegExp(`^${DISCORD_API_PREFIX}/webhooks/[^/]+/[^/]+/messages/@original$`).test(call.path)) {
      if (call.method === 'DELETE') return { status: 204 };
      if (call.method === 'PATCH') return { status: 200, body: { id: '1000', content: (call.body as { content?: string }).content } };
    }
    return { status: 404, body: { message: '404: Not Found', code: 0 } };
  });
}

/** Discord's 429: `retry_after` in seconds with a fraction, also as the Retry-After header. */
export function discordRateLimited(retryAfterSec: number): Answer {
  return {
    status: 429,
    headers: { 'Retry-After': String(Math.ceil(retryAfterSec)) },
    body: { message: 'You are being rate limited.', retry_after: retryAfterSec, global: false },
  };
}
