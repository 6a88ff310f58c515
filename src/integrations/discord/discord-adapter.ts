import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import { z } from 'zod';
import { badRequest } from '../../domain/errors.js';
import { InFlight } from '../shared/in-flight.js';
import { postEndpoint } from '../shared/post-endpoint.js';
import { parseJsonBody } from '../shared/read-raw-body.js';
import { silentLogger } from '../shared/silent-logger.js';
import { DiscordApi } from './discord-api.js';
import { discordSignature } from './discord-signature.js';

/** What the handler is given for an application command. */
export interface DiscordCommand {
  channelID: string;
  userID: string;
  /** The command's option values (subcommand options included), joined with spaces. */
  content: string;
}

/** Answers a command; the text is posted to the channel, an empty text posts nothing. */
export type DiscordHandler = (command: DiscordCommand) => string | Promise<string>;

export interface DiscordAdapterOptions {
  botToken: string;
  handler: DiscordHandler;
  /** The application's Ed25519 public key (hex); when set, unsigned or badly signed requests get 401. */
  publicKey?: string;
  /** @defaultValue 'https://discord.com/api/v10' */
  apiBaseUrl?: string;
  /** Path of the interactions endpoint. @defaultValue '/discord/interactions' */
  path?: string;
  /** Upper bound of one outbound call. @defaultValue 10000 */
  requestTimeoutMs?: number;
  /** @defaultValue global fetch */
  fetch?: typeof fetch;
  /** @defaultValue a silent logger */
  logger?: Logger;
}

/** Shown in place of "thinking…" when the handler or the reply failed. */
export const DISCORD_FAILURE_TEXT = 'Sorry, something went wrong while answering.';

const PING = 1 as const;
const APPLICATION_COMMAND = 2 as const;
const PONG = 1;
const DEFERRED_CHANNEL_MESSAGE = 5;

/**
 * Discord interactions endpoint: a ping gets the pong; an application command gets a
 * deferred acknowledgement at once (Discord allows 3 s) while the handler runs in the
 * background, its reply is posted with POST /channels/{id}/messages as the bot, and the
 * deferred "thinking…" response is then deleted, or replaced by a failure notice, so it never
 * hangs. A handler's error never reaches the HTTP answer.
 */
export class DiscordAdapter {
  private readonly api: DiscordApi;
  private readonly logger: Logger;
  private readonly tasks: InFlight;
  private readonly endpoint: Middleware;
  private stopping: Promise<void> | undefined;

  constructor(private readonly options: DiscordAdapterOptions) {
    if (options.botToken === '') throw new TypeError('DiscordAdapter needs a bot token');
    this.logger = options.logger ?? silentLogger();
    this.api = new DiscordApi({
      botToken: options.botToken,
      apiBaseUrl: options.apiBaseUrl,
      timeoutMs: options.requestTimeoutMs ?? 10_000,
      fetch: options.fetch ?? fetch,
    });
    this.tasks = new InFlight((error) => this.logger.error({ err: error }, 'Discord task failed'));
    this.endpoint = postEndpoint({
      path: options.path ?? '/discord/interactions',
      name: 'Discord adapter',
      stopped: () => this.stopping !== undefined,
      signature: options.publicKey === undefined ? undefined : discordSignature(options.publicKey),
      handle: (ctx, body) => this.receive(ctx, body),
      // Tracing on: each delivery continues the sender's traceparent; the handler's work sits under it.
      span: 'discord interaction',
    });
  }

  /** Koa middleware serving the interactions path; other paths go to `next`. */
  middleware(): Middleware {
    return this.endpoint;
  }

  /** Refuses new interactions (503) and waits for running handlers and their replies; idempotent. */
  stop(): Promise<void> {
    this.stopping ??= this.tasks.drain();
    return this.stopping;
  }

  private receive(ctx: Context, body: Buffer): void {
    const interaction = parseInteraction(parseJsonBody(body));
    if (interaction.type === PING) {
      ctx.body = { type: PONG };
      return;
    }
    void this.tasks.run(() => this.answer(interaction));
    ctx.body = { type: DEFERRED_CHANNEL_MESSAGE };
  }

  private async answer(interaction: CommandInteraction): Promise<void> {
    try {
      const reply = await this.options.handler(interaction.command);
      if (reply !== '') await this.api.createMessage(interaction.command.channelID, reply);
    } catch (error) {
      this.logger.error({ err: error, channel_id: interaction.command.channelID }, 'Discord command was not answered');
      await this.api.editOriginal(interaction.application_id, interaction.token, DISCORD_FAILURE_TEXT);
      return;
    }
    await this.api.deleteOriginal(interaction.application_id, interaction.token);
  }
}

const id = z.string().min(1);

interface CommandOption {
  value?: unknown;
  options?: CommandOption[];
}

const optionSchema: z.ZodType<CommandOption> = z.lazy(() =>
  z.object({ value: z.unknown().optional(), options: z.array(optionSchema).optional() }),
);

/** The fields the adapter relies on; Discord sends many more. */
const interactionSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal(PING) }),
  z
    .object({
      type: z.literal(APPLICATION_COMMAND),
      application_id: id,
      token: id,
      channel_id: id.optional(),
      channel: z.object({ id }).optional(),
      member: z.object({ user: z.object({ id }) }).optional(),
      user: z.object({ id }).optional(),
      data: z.object({ options: z.array(optionSchema).optional() }).optional(),
    })
    .transform((raw, ctx) => {
      const channelID = raw.channel_id ?? raw.channel?.id;
      const userID = raw.member?.user.id ?? raw.user?.id;
      if (channelID === undefined || userID === undefined) {
        ctx.addIssue({ code: 'custom', message: 'An application command needs channel_id and member.user.id or user.id' });
        return z.NEVER;
      }
      const content = optionValues(raw.data?.options).join(' ');
      return { type: raw.type, application_id: raw.application_id, token: raw.token, command: { channelID, userID, content } };
    }),
]);

type Interaction = z.output<typeof interactionSchema>;
type CommandInteraction = Extract<Interaction, { type: typeof APPLICATION_COMMAND }>;

function parseInteraction(value: unknown): Interaction {
  const parsed = interactionSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw badRequest(`Unsupported interaction: ${issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''}${issue.message}.`);
}

/** Values of a command's options in order, descending into subcommands and groups. */
function optionValues(options: CommandOption[] | undefined): string[] {
  return (options ?? []).flatMap((option) => (option.value === undefined ? optionValues(option.options) : [String(option.value)]));
}
