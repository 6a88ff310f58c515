import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import { badRequest } from '../../domain/errors.js';
import type { Approval } from '../../domain/types.js';
import { discordSignature } from '../discord/discord-signature.js';
import { callPlatform, PlatformError, retryAfterHeaderMs, type PlatformRequest } from '../shared/platform-request.js';
import { postEndpoint } from '../shared/post-endpoint.js';
import { parseJsonBody } from '../shared/read-raw-body.js';
import type { DiscordChatConfig } from './config.js';
import { PRESS_REFUSALS, type GatewayCore } from './gateway-core.js';
import type { ChatPlatform, MessageRef, Place } from './platform.js';
import { approvalLines, outcomeLine, platformUser } from './render.js';

const PING = 1;
const APPLICATION_COMMAND = 2;
const MESSAGE_COMPONENT = 3;
const PONG = { type: 1 };
/** Acknowledges a button press; the message is edited once the decision is heard. */
const DEFERRED_UPDATE_MESSAGE = { type: 6 };
const CHANNEL_MESSAGE = 4;
const EPHEMERAL = 64;
const BUTTON = /^apv:([yn]):(.+)$/;
/** Discord's limit of a message's content. */
const MAX_CONTENT = 2000;

interface Interaction {
  type?: number;
  id?: string;
  channel_id?: string;
  channel?: { id?: string };
  member?: { user?: { id?: string } };
  user?: { id?: string };
  message?: { id?: string };
  data?: { custom_id?: string; options?: CommandOption[] };
}

interface CommandOption {
  value?: unknown;
  options?: CommandOption[];
}

/**
 * Discord in the chat gateway, on `POST /discord/interactions` (Ed25519 signature by
 * DISCORD_PUBLIC_KEY; a timestamp older than five minutes refused: 401). A PING gets the PONG; an
 * application command (a slash command such as `/ask <text>`) starts or continues the session
 * of its channel or thread, and the answer is posted there; an Approve / Reject button press is
 * decided, acknowledged with a deferred update, and the message edited through the channel
 * message API once the decision is heard. Refusals are ephemeral messages to the presser.
 */
export class DiscordChat implements ChatPlatform {
  readonly name = 'discord' as const;
  private readonly endpoint: Middleware;

  constructor(
    readonly config: DiscordChatConfig,
    private readonly core: GatewayCore,
    private readonly logger: Logger,
  ) {
    this.endpoint = postEndpoint({
      path: '/discord/interactions',
      name: 'Discord gateway',
      stopped: () => core.closing,
      signature: discordSignature(config.publicKey),
      handle: (ctx, body) => this.interaction(ctx, body),
    });
  }

  middleware(): Middleware {
    return this.endpoint;
  }

  async postApproval(place: Place, approval: Approval): Promise<MessageRef> {
    const message = (await this.send('POST', `/channels/${encodeURIComponent(place.channel)}/messages`, {
      content: this.describe(approval),
      allowed_mentions: { parse: [] },
      components: [
        {
          type: 1,
          components: [
            { type: 2, style: 3, label: 'Approve', custom_id: `apv:y:${approval.id}` },
            { type: 2, style: 4, label: 'Reject', custom_id: `apv:n:${approval.id}` },
          ],
        },
      ],
    })) as { id?: unknown };
    return { channel: place.channel, message: String(message.id) };
  }

  async showOutcome(ref: MessageRef, approval: Approval): Promise<void> {
    const outcome = outcomeLine(approval, (by) => {
      const user = platformUser(by, 'discord');
      return user === undefined ? by : `<@${user}>`;
    });
    await this.send('PATCH', `/channels/${encodeURIComponent(ref.channel)}/messages/${encodeURIComponent(ref.message)}`, {
      content: cut(`${this.describe(approval)}\n**${outcome}**`),
      allowed_mentions: { parse: [] },
      components: [],
    });
  }

  async postReply(place: Place, text: string): Promise<MessageRef> {
    const message = (await this.send('POST', `/channels/${encodeURIComponent(place.channel)}/messages`, { content: cut(text), allowed_mentions: { parse: [] } })) as { id?: unknown };
    return { channel: place.channel, message: String(message.id) };
  }

  async editReply(ref: MessageRef, text: string): Promise<void> {
    await this.send('PATCH', `/channels/${encodeURIComponent(ref.channel)}/messages/${encodeURIComponent(ref.message)}`, { content: cut(text), allowed_mentions: { parse: [] } });
  }

  private describe(approval: Approval): string {
    const { prompt, context, payload } = approvalLines(approval);
    return cut(`**Approval requested**: ${prompt}\n${payload === undefined ? '' : `\`\`\`json\n${payload}\n\`\`\`\n`}-# ${context}`);
  }

  private async interaction(ctx: Context, body: Buffer): Promise<void> {
    const interaction = parseJsonBody(body) as Interaction | null;
    if (typeof interaction !== 'object' || interaction === null) throw badRequest('An interaction is a JSON object.');
    const channel = interaction.channel_id ?? interaction.channel?.id;
    const user = interaction.member?.user?.id ?? interaction.user?.id;
    if (interaction.type === PING) {
      ctx.body = PONG;
      return;
    }
    if (!channel || !user || !interaction.id) throw badRequest('An interaction needs its id, channel_id and user.');
    if (interaction.type === MESSAGE_COMPONENT) {
      const button = BUTTON.exec(interaction.data?.custom_id ?? '');
      const messageId = interaction.message?.id;
      if (!button || !messageId) throw badRequest('This component is not an approval button.');
      const outcome = await this.core.press(this, button[2]!, button[1] === 'y', user, { channel, message: messageId });
      ctx.body = outcome === 'decided' ? DEFERRED_UPDATE_MESSAGE : ephemeral(PRESS_REFUSALS[outcome]);
      return;
    }
    if (interaction.type !== APPLICATION_COMMAND) throw badRequest(`Interactions of type ${String(interaction.type)} are not handled.`);
    const text = optionValues(interaction.data?.options).join(' ').trim();
    if (this.config.agent === undefined || text === '') {
      ctx.body = ephemeral(this.config.agent === undefined ? 'No agent answers here.' : 'Ask something: the command needs a text.');
      return;
    }
    // Discord does not redeliver an interaction, but a captured one could be replayed in its window.
    const key = `discord:interaction:${interaction.id}`;
    if (!(await this.core.claim(key))) {
      ctx.body = ephemeral('This message was already handled.');
      return;
    }
    try {
      await this.core.converse(this, { channel }, text);
    } catch (error) {
      await this.core.release(key);
      throw error;
    }
    ctx.body = { type: CHANNEL_MESSAGE, data: { content: cut(`<@${user}>: ${text}`), allowed_mentions: { parse: [] } } };
  }

  private async send(method: PlatformRequest['method'], path: string, json: unknown): Promise<unknown> {
    const label = `Discord ${method} ${path.replace(/\/\d+/g, '/{id}')}`;
    const response = await callPlatform(
      { label, method, url: `${this.config.apiUrl}${path}`, headers: { Authorization: `Bot ${this.config.botToken}` }, json },
      { fetch, timeoutMs: 10_000, retryAfterMs: (r) => (r.status === 429 ? retryAfterHeaderMs(r.headers) ?? 1000 : undefined) },
    );
    if (response.status >= 200 && response.status < 300) return response.body;
    const answer = response.body as { message?: unknown; code?: unknown } | null;
    const code = typeof answer?.code === 'number' || typeof answer?.code === 'string' ? answer.code : undefined;
    this.logger.debug({ status: response.status, code }, 'Discord refused a call');
    throw new PlatformError(label, response.status, code, typeof answer?.message === 'string' ? answer.message : 'no message');
  }
}

function ephemeral(content: string): object {
  return { type: CHANNEL_MESSAGE, data: { content, flags: EPHEMERAL } };
}

function cut(text: string): string {
  return text.length > MAX_CONTENT ? `${text.slice(0, MAX_CONTENT - 1)}…` : text;
}

/** Values of a command's options in order, descending into subcommands and groups. */
function optionValues(options: CommandOption[] | undefined): string[] {
  return (options ?? []).flatMap((option) => (option.value === undefined ? optionValues(option.options) : [String(option.value)]));
}
