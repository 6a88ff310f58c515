import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import { z } from 'zod';
import { badRequest } from '../../domain/errors.js';
import { InFlight } from '../shared/in-flight.js';
import { serveMiddleware, type ListenAddress, type ListeningServer } from '../../http/listen.js';
import { PlatformError } from '../shared/platform-request.js';
import { postEndpoint } from '../shared/post-endpoint.js';
import { parseJsonBody } from '../shared/read-raw-body.js';
import { silentLogger } from '../shared/silent-logger.js';
import { RecentIds } from './recent-ids.js';
import { SlackApi } from './slack-api.js';
import { slackSignature } from './slack-signature.js';

/** What the handler is given for a user's message. */
export interface SlackMessage {
  channel: string;
  user: string;
  text: string;
  /** The thread the reply goes to: the message's thread, or the message itself when top-level. */
  threadTS: string;
}

/** Answers a message; a non-empty text is posted in the message's thread. */
export type SlackHandler = (message: SlackMessage) => string | Promise<string>;

export interface SlackAdapterOptions {
  botToken: string;
  handler: SlackHandler;
  /** The app's signing secret; when set, requests without a valid v0 signature get 401. */
  signingSecret?: string;
  /** @defaultValue 'https://slack.com/api' */
  apiBaseUrl?: string;
  /** Path of the Events API endpoint. @defaultValue '/slack/events' */
  path?: string;
  /** How many recent event ids are remembered to drop redeliveries. @defaultValue 10000 */
  dedupeCapacity?: number;
  /** Upper bound of one outbound call. @defaultValue 10000 */
  requestTimeoutMs?: number;
  /** @defaultValue global fetch */
  fetch?: typeof fetch;
  /** @defaultValue a silent logger */
  logger?: Logger;
}

const envelopeSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('url_verification'), challenge: z.string() }),
  z.object({
    type: z.literal('event_callback'),
    event_id: z.string().min(1),
    event: z.object({
      type: z.string(),
      subtype: z.string().optional(),
      bot_id: z.string().optional(),
      channel: z.string().optional(),
      user: z.string().optional(),
      text: z.string().optional(),
      ts: z.string().optional(),
      thread_ts: z.string().optional(),
    }),
  }),
]);

type SlackEvent = Extract<z.output<typeof envelopeSchema>, { type: 'event_callback' }>['event'];

/**
 * Slack Events API endpoint: answers the url_verification challenge, acknowledges every event
 * at once (Slack retries after 3 s), drops redeliveries of an event_id already seen and events
 * carrying bot_id (so the bot never answers itself), and runs the handler for plain user
 * messages in the background, replying with chat.postMessage in the message's thread.
 */
export class SlackAdapter {
  private readonly api: SlackApi;
  private readonly logger: Logger;
  private readonly tasks: InFlight;
  private readonly seen: RecentIds;
  private readonly endpoint: Middleware;
  private server: ListeningServer | undefined;
  private stopping: Promise<void> | undefined;

  constructor(private readonly options: SlackAdapterOptions) {
    if (options.botToken === '') throw new TypeError('SlackAdapter needs a bot token');
    this.logger = options.logger ?? silentLogger();
    this.api = new SlackApi({
      botToken: options.botToken,
      apiBaseUrl: options.apiBaseUrl,
      timeoutMs: options.requestTimeoutMs ?? 10_000,
      fetch: options.fetch ?? fetch,
    });
    this.tasks = new InFlight((error) => this.logger.error({ err: error }, 'Slack task failed'));
    this.seen = new RecentIds(options.dedupeCapacity ?? 10_000);
    this.endpoint = postEndpoint({
      path: options.path ?? '/slack/events',
      name: 'Slack adapter',
      stopped: () => this.stopping !== undefined,
      signature: options.signingSecret === undefined ? undefined : slackSignature(options.signingSecret),
      handle: (ctx, body) => this.receive(ctx, body),
      // Tracing on: each delivery continues the sender's traceparent; the handler's work sits under it.
      span: 'slack event',
    });
  }

  /** Koa middleware serving the events path; other paths go to `next`. */
  middleware(): Middleware {
    return this.endpoint;
  }

  /** Serves the adapter alone on `address`, at its path (`/slack/events` unless configured). */
  async start(address: ListenAddress): Promise<ListeningServer> {
    if (this.server) throw new Error('The Slack adapter is already started');
    this.server = await serveMiddleware(this.endpoint, address);
    return this.server;
  }

  /** Refuses new events (503), closes its own server and waits for running handlers; idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await this.server?.close();
      await this.tasks.drain();
    })();
    return this.stopping;
  }

  private receive(ctx: Context, body: Buffer): void {
    const raw = parseJsonBody(body) as { type?: unknown } | null;
    if (raw?.type !== 'url_verification' && raw?.type !== 'event_callback') {
      // Other envelopes (app_rate_limited, …) need nothing but an acknowledgement.
      ctx.body = '';
      return;
    }
    const parsed = envelopeSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw badRequest(`Malformed Slack ${raw.type}: ${issue.path.join('.')}: ${issue.message}.`);
    }
    const envelope = parsed.data;
    if (envelope.type === 'url_verification') {
      ctx.body = { challenge: envelope.challenge };
      return;
    }
    ctx.body = '';
    const retry = ctx.get('X-Slack-Retry-Num');
    if (!this.seen.add(envelope.event_id)) {
      this.logger.debug({ event_id: envelope.event_id, retry }, 'Slack redelivered an event already handled');
      return;
    }
    const message = userMessage(envelope.event);
    if (message) void this.tasks.run(() => this.answer(message));
  }

  private async answer(message: SlackMessage): Promise<void> {
    try {
      const reply = await this.options.handler(message);
      if (reply !== '') await this.api.postMessage(message.channel, reply, message.threadTS);
    } catch (error) {
      const code = error instanceof PlatformError ? error.platformCode : undefined;
      this.logger.error({ err: error, channel: message.channel, slack_error: code }, 'Slack message was not answered');
    }
  }
}

/** A plain message typed by a person; edits, joins, bot posts and other subtypes are not. */
function userMessage(event: SlackEvent): SlackMessage | undefined {
  if (event.type !== 'message' || event.bot_id !== undefined || event.subtype !== undefined) return undefined;
  const { channel, user, text, ts } = event;
  if (channel === undefined || user === undefined || text === undefined || ts === undefined) return undefined;
  return { channel, user, text, threadTS: event.thread_ts ?? ts };
}
