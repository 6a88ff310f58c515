import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import { badRequest } from '../../domain/errors.js';
import type { Approval } from '../../domain/types.js';
import { discordSignature } from '../discord/discord-signature.js';
import { callPlatform, PlatformError, retryAfterHeaderMs, type PlatformRequest } from '../shared/platform-request.js';
import { postEndpoint } from '../shared/post-endpoint.js';
import { parseJsonBody } from '../shared/read-raw-body.js';
import type { DiscordChatConfig } from './config.js';
import { PRESS_REFUSALS, type GatewayCore, type PressOutcome } from './gateway-core.js';
import type { ChatPlatform, MessageRef, Place } from './platform.js';
import { approvalLines, outcomeLine, platformUser } from './render.js';

const PING = 1;
const APPLICATION_COMMAND = 2;
const MESSAGE_COMPONENT = 3;
const MODAL_SUBMIT = 5;
const PONG = { type: 1 };
/** Acknowledges a button press or a dialog's submission; the message is edited once the decision is heard. */
const DEFERRED_UPDATE_MESSAGE = { type: 6 };
const CHANNEL_MESSAGE = 4;
/** The interaction response that opens a dialog. */
const MODAL = 9;
const EPHEMERAL = 64;
/** Approve (`y`), Reject (`n`) and Comment (`c`, opens the decision dialog) of an approval message. */
const BUTTON = /^apv:([ync]):(.+)$/;
/** The decision dialog of an approval. */
const DECISION_MODAL = /^apd:(.+)$/;
/** Discord's limit of a message's content. */
const MAX_CONTENT = 2000;
/** The longest comment the dialog takes (POST /api/approval/respond takes 10 000 characters). */
const MAX_COMMENT = 3000;

interface Interaction {
  type?: number;
  id?: string;
  channel_id?: string;
  channel?: { id?: string };
  member?: { user?: { id?: string } };
  user?: { id?: string };
  message?: { id?: string };
  data?: { custom_id?: string; options?: CommandOption[]; components?: SubmittedComponent[] };
}

/** A component of a submitted dialog: a label holding one `component`, an action row holding `components`, or an input. */
interface SubmittedComponent {
  custom_id?: string;
  value?: unknown;
  values?: unknown[];
  component?: SubmittedComponent;
  components?: SubmittedComponent[];
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
 * message API once the decision is heard. Comment opens a dialog (a modal: Approve or Reject,
 * and a comment) for approvers, whose submission decides with the comment. Refusals are
 * ephemeral messages to the presser.
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
            { type: 2, style: 2, label: 'Comment…', custom_id: `apv:c:${approval.id}` },
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
      content: cut(`${this.describe(approval)}\n**${outcome}**${approval.comment ? `\n> ${approval.comment.replace(/\n/g, '\n> ')}` : ''}`),
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
    if (interaction.type === PING) {
      ctx.body = PONG;
      return;
    }
    const channel = interaction.channel_id ?? interaction.channel?.id;
    const user = interaction.member?.user?.id ?? interaction.user?.id;
    if (!channel || !user || !interaction.id) throw badRequest('An interaction needs its id, channel_id and user.');
    if (interaction.type === MESSAGE_COMPONENT) ctx.body = await this.button(interaction, channel, user);
    else if (interaction.type === MODAL_SUBMIT) ctx.body = await this.submission(interaction, channel, user);
    else if (interaction.type === APPLICATION_COMMAND) ctx.body = await this.command(interaction, channel, user);
    else throw badRequest(`Interactions of type ${String(interaction.type)} are not handled.`);
  }

  /** Approve or Reject decides; Comment opens the decision dialog for an approver. */
  private async button(interaction: Interaction, channel: string, user: string): Promise<object> {
    const button = BUTTON.exec(interaction.data?.custom_id ?? '');
    const messageId = interaction.message?.id;
    if (!button || !messageId) throw badRequest('This component is not an approval button.');
    const choice = button[1];
    const approvalId = button[2]!;
    if (choice === 'c') return this.config.approvers.has(user) ? decisionModal(approvalId) : ephemeral(PRESS_REFUSALS.not_allowed);
    return pressAnswer(await this.core.press(this, approvalId, choice === 'y', user, { channel, message: messageId }));
  }

  /** The decision dialog submitted (from the approval message): decided with its comment. */
  private async submission(interaction: Interaction, channel: string, user: string): Promise<object> {
    const target = DECISION_MODAL.exec(interaction.data?.custom_id ?? '');
    const messageId = interaction.message?.id;
    if (!target || !messageId) throw badRequest('This dialog is not a decision of an approval.');
    const choice = submittedValue(interaction.data?.components, 'decision');
    const comment = submittedValue(interaction.data?.components, 'comment') ?? '';
    if (choice !== 'approve' && choice !== 'reject') return ephemeral('Choose Approve or Reject.');
    if (comment.length > MAX_COMMENT) return ephemeral(`A comment holds at most ${MAX_COMMENT} characters.`);
    return pressAnswer(await this.core.press(this, target[1]!, choice === 'approve', user, { channel, message: messageId }, comment));
  }

  /** An application command's text is a message of its channel's conversation. */
  private async command(interaction: Interaction, channel: string, user: string): Promise<object> {
    const text = optionValues(interaction.data?.options).join(' ').trim();
    if (this.config.agent === undefined) return ephemeral('No agent answers here.');
    if (text === '') return ephemeral('Ask something: the command needs a text.');
    // Discord does not redeliver an interaction, but a captured one could be replayed in its window.
    const key = `discord:interaction:${interaction.id}`;
    if (!(await this.core.claim(key))) return ephemeral('This message was already handled.');
    try {
      await this.core.converse(this, { channel }, text);
    } catch (error) {
      await this.core.release(key);
      throw error;
    }
    return { type: CHANNEL_MESSAGE, data: { content: cut(`<@${user}>: ${text}`), allowed_mentions: { parse: [] } } };
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

/** How a press or a submission is answered: a deferred update when decided, else the refusal to the presser only. */
function pressAnswer(outcome: PressOutcome): object {
  return outcome === 'decided' ? DEFERRED_UPDATE_MESSAGE : ephemeral(PRESS_REFUSALS[outcome]);
}

/** The decision dialog: a select of Approve or Reject and an optional comment, each in a label (type 18). */
function decisionModal(approvalId: string): object {
  const choice = (label: string, value: string) => ({ label, value });
  return {
    type: MODAL,
    data: {
      custom_id: `apd:${approvalId}`,
      title: 'Decide the approval',
      components: [
        { type: 18, label: 'Decision', component: { type: 3, custom_id: 'decision', required: true, options: [choice('Approve', 'approve'), choice('Reject', 'reject')] } },
        { type: 18, label: 'Comment', component: { type: 4, custom_id: 'comment', style: 2, required: false, max_length: MAX_COMMENT } },
      ],
    },
  };
}

/** The value of the input `customId` of a submitted dialog (a text input's value, a select's first value), wherever it is nested. */
function submittedValue(components: SubmittedComponent[] | undefined, customId: string): string | undefined {
  for (const component of components ?? []) {
    if (component.custom_id === customId) {
      const value = component.value ?? component.values?.[0];
      return typeof value === 'string' ? value : undefined;
    }
    const nested = submittedValue([...(component.component ? [component.component] : []), ...(component.components ?? [])], customId);
    if (nested !== undefined) return nested;
  }
  return undefined;
}

function cut(text: string): string {
  return text.length > MAX_CONTENT ? `${text.slice(0, MAX_CONTENT - 1)}…` : text;
}

/** Values of a command's options in order, descending into subcommands and groups. */
function optionValues(options: CommandOption[] | undefined): string[] {
  return (options ?? []).flatMap((option) => (option.value === undefined ? optionValues(option.options) : [String(option.value)]));
}
