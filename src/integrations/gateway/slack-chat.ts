import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import { badRequest } from '../../domain/errors.js';
import type { Approval } from '../../domain/types.js';
import { callPlatform, PlatformError, retryAfterHeaderMs } from '../shared/platform-request.js';
import { postEndpoint } from '../shared/post-endpoint.js';
import { parseJsonBody } from '../shared/read-raw-body.js';
import { slackSignature } from '../slack/slack-signature.js';
import type { SlackChatConfig } from './config.js';
import { PRESS_REFUSALS, type GatewayCore } from './gateway-core.js';
import { chain, type ChatPlatform, type MessageRef, type Place } from './platform.js';
import { approvalLines, outcomeLine, platformUser } from './render.js';

const BUTTONS_BLOCK = 'agentplane_approval';
/** The decision dialog (a modal) the Comment button opens. */
const DECISION_VIEW = 'agentplane_decision';
/** The longest comment the dialog takes (POST /api/approval/respond takes 10 000 characters). */
const MAX_COMMENT = 3000;

/**
 * Slack in the chat gateway. `POST /slack/events` (Events API): a mention of the bot or a direct
 * message starts or continues the session of its thread (a direct message outside a thread: of
 * the direct message channel), a reply in a thread that already is a session continues it; the bot's own posts, edits and other subtypes are ignored, and a message
 * is handled once however often Slack redelivers it (or sends it as both `app_mention` and
 * `message`). `POST /slack/interactions`: Approve / Reject presses, and Comment: a
 * dialog (views.open) where an approver decides with a comment, handled on its view_submission. Both verify Slack's v0
 * signature with the signing secret (timestamps older than five minutes refused: 401).
 */
export class SlackChat implements ChatPlatform {
  readonly name = 'slack' as const;
  private readonly endpoints: Middleware;

  constructor(
    readonly config: SlackChatConfig,
    private readonly core: GatewayCore,
    private readonly logger: Logger,
  ) {
    const signature = slackSignature(config.signingSecret);
    const stopped = (): boolean => core.closing;
    this.endpoints = chain([
      postEndpoint({ path: '/slack/events', name: 'Slack gateway', stopped, signature, handle: (ctx, body) => this.event(ctx, body) }),
      postEndpoint({ path: '/slack/interactions', name: 'Slack gateway', stopped, signature, handle: (ctx, body) => this.interaction(ctx, body) }),
    ]);
  }

  middleware(): Middleware {
    return this.endpoints;
  }

  async postApproval(place: Place, approval: Approval): Promise<MessageRef> {
    const { prompt, context, payload } = approvalLines(approval);
    const answer = await this.call('chat.postMessage', {
      channel: place.channel,
      ...(place.thread === undefined ? {} : { thread_ts: place.thread }),
      text: `Approval requested: ${prompt}`,
      blocks: [
        ...this.describe(prompt, context, payload),
        {
          type: 'actions',
          block_id: BUTTONS_BLOCK,
          elements: [
            { type: 'button', action_id: 'approve', style: 'primary', text: { type: 'plain_text', text: 'Approve' }, value: approval.id },
            { type: 'button', action_id: 'reject', style: 'danger', text: { type: 'plain_text', text: 'Reject' }, value: approval.id },
            { type: 'button', action_id: 'comment', text: { type: 'plain_text', text: 'Comment…' }, value: approval.id },
          ],
        },
      ],
    });
    return { channel: String(answer.channel ?? place.channel), message: String(answer.ts) };
  }

  async showOutcome(ref: MessageRef, approval: Approval): Promise<void> {
    const { prompt, context, payload } = approvalLines(approval);
    const outcome = outcomeLine(approval, (by) => {
      const user = platformUser(by, 'slack');
      return user === undefined ? escape(by) : `<@${user}>`;
    });
    await this.call('chat.update', {
      channel: ref.channel,
      ts: ref.message,
      text: `${outcome}: ${prompt}`,
      blocks: [
        ...this.describe(prompt, context, payload),
        { type: 'section', text: { type: 'mrkdwn', text: `*${outcome}*${approval.comment ? `\n> ${escape(approval.comment).replace(/\n/g, '\n> ')}` : ''}` } },
      ],
    });
  }

  async postReply(place: Place, text: string): Promise<MessageRef> {
    const answer = await this.call('chat.postMessage', { channel: place.channel, text, ...(place.thread === undefined ? {} : { thread_ts: place.thread }) });
    return { channel: String(answer.channel ?? place.channel), message: String(answer.ts) };
  }

  async editReply(ref: MessageRef, text: string): Promise<void> {
    await this.call('chat.update', { channel: ref.channel, ts: ref.message, text });
  }

  private describe(prompt: string, context: string, payload: string | undefined): object[] {
    return [
      { type: 'section', text: { type: 'mrkdwn', text: `*Approval requested*\n${escape(prompt)}` } },
      ...(payload === undefined ? [] : [{ type: 'section', text: { type: 'mrkdwn', text: `\`\`\`${escape(payload)}\`\`\`` } }]),
      { type: 'context', elements: [{ type: 'mrkdwn', text: escape(context) }] },
    ];
  }

  private async event(ctx: Context, body: Buffer): Promise<void> {
    const envelope = parseJsonBody(body) as { type?: unknown; challenge?: unknown; event?: Record<string, unknown> } | null;
    ctx.body = '';
    if (envelope?.type === 'url_verification') {
      if (typeof envelope.challenge !== 'string') throw badRequest('A url_verification needs its challenge.');
      ctx.body = { challenge: envelope.challenge };
      return;
    }
    // Other envelopes (app_rate_limited, …) need nothing but an acknowledgement.
    if (envelope?.type !== 'event_callback' || typeof envelope.event !== 'object' || envelope.event === null) return;
    const message = userMessage(envelope.event);
    if (!message) return;
    const place: Place = { channel: message.channel, ...(message.thread === undefined ? {} : { thread: message.thread }) };
    // A reply in a channel thread without a mention continues a conversation, never starts one.
    if (message.kind === 'reply' && !(await this.core.conversationExists(this, place))) return;
    const key = `slack:message:${message.channel}:${message.ts}`;
    if (!(await this.core.claim(key))) return;
    try {
      await this.core.converse(this, place, message.text);
    } catch (error) {
      // Not acknowledged: Slack retries, and the retry is handled.
      await this.core.release(key);
      throw error;
    }
  }

  private async interaction(ctx: Context, body: Buffer): Promise<void> {
    const payload = parseInteraction(body);
    ctx.body = '';
    if (payload.type === 'view_submission' && payload.view?.callback_id === DECISION_VIEW) return this.submission(ctx, payload);
    const action = payload.actions?.find((candidate) => candidate.block_id === BUTTONS_BLOCK || candidate.action_id === 'approve' || candidate.action_id === 'reject');
    const channel = payload.container?.channel_id ?? payload.channel?.id;
    const ts = payload.container?.message_ts ?? payload.message?.ts;
    const user = payload.user?.id;
    if (payload.type !== 'block_actions' || !action || typeof action.value !== 'string' || !channel || !ts || !user) return;
    const outcome =
      action.action_id === 'comment'
        ? await this.openDialog(payload.trigger_id, action.value, user, { channel, message: ts })
        : await this.core.press(this, action.value, action.action_id === 'approve', user, { channel, message: ts });
    if (outcome === 'decided' || outcome === 'opened') return;
    // Told only to the presser; the acknowledgement does not wait for it.
    void this.call('chat.postEphemeral', { channel, user, text: PRESS_REFUSALS[outcome], ...(payload.container?.thread_ts ? { thread_ts: payload.container.thread_ts } : {}) }).catch(
      (error: unknown) => this.logger.warn({ err: error }, 'Slack refusal notice was not posted'),
    );
  }

  /** Opens the decision dialog for an approver (Slack's trigger is valid for 3 s: opened before acknowledging). */
  private async openDialog(trigger: string | undefined, approvalId: string, user: string, ref: MessageRef): Promise<'opened' | 'not_allowed'> {
    if (!this.config.approvers.has(user)) return 'not_allowed';
    if (trigger === undefined) throw badRequest('A press of Comment needs its trigger_id.');
    const choice = (text: string, value: string) => ({ text: { type: 'plain_text', text }, value });
    const view = {
      type: 'modal',
      callback_id: DECISION_VIEW,
      private_metadata: JSON.stringify({ approval: approvalId, channel: ref.channel, ts: ref.message }),
      title: { type: 'plain_text', text: 'Decide the approval' },
      submit: { type: 'plain_text', text: 'Decide' },
      close: { type: 'plain_text', text: 'Cancel' },
      blocks: [
        { type: 'input', block_id: 'decision', label: { type: 'plain_text', text: 'Decision' }, element: { type: 'radio_buttons', action_id: 'choice', options: [choice('Approve', 'approve'), choice('Reject', 'reject')] } },
        { type: 'input', block_id: 'comment', optional: true, label: { type: 'plain_text', text: 'Comment' }, element: { type: 'plain_text_input', action_id: 'text', multiline: true, max_length: MAX_COMMENT } },
      ],
    };
    await this.call('views.open', { trigger_id: trigger, view });
    return 'opened';
  }

  /** The decision dialog submitted: decided with its comment; a refusal is shown in the dialog. */
  private async submission(ctx: Context, payload: SlackInteraction): Promise<void> {
    const values = payload.view?.state?.values;
    const choice = values?.decision?.choice?.selected_option?.value;
    const comment = values?.comment?.text?.value ?? '';
    let target: { approval?: unknown; channel?: unknown; ts?: unknown } = {};
    try {
      target = JSON.parse(payload.view?.private_metadata ?? '{}') as typeof target;
    } catch {
      // refused below
    }
    const user = payload.user?.id;
    if (typeof target.approval !== 'string' || typeof target.channel !== 'string' || typeof target.ts !== 'string' || !user) throw badRequest('This dialog is not a decision of an approval.');
    if ((choice !== 'approve' && choice !== 'reject') || typeof comment !== 'string' || comment.length > MAX_COMMENT) {
      ctx.body = { response_action: 'errors', errors: { decision: 'Choose Approve or Reject.' } };
      return;
    }
    const outcome = await this.core.press(this, target.approval, choice === 'approve', user, { channel: target.channel, message: target.ts }, comment);
    if (outcome !== 'decided') ctx.body = { response_action: 'errors', errors: { decision: PRESS_REFUSALS[outcome] } };
  }

  /** One Web API method as the bot; Slack's `{ok:false,error}` becomes a {@link PlatformError}. */
  private async call(method: string, json: Record<string, unknown>): Promise<Record<string, unknown>> {
    const label = `Slack ${method}`;
    const response = await callPlatform(
      { label, method: 'POST', url: `${this.config.apiUrl}/${method}`, headers: { Authorization: `Bearer ${this.config.botToken}` }, json },
      { fetch, timeoutMs: 10_000, retryAfterMs: (r) => (r.status === 429 ? retryAfterHeaderMs(r.headers) ?? 1000 : undefined) },
    );
    const answer = (response.body ?? {}) as Record<string, unknown>;
    if (response.status === 200 && answer.ok === true) return answer;
    const code = typeof answer.error === 'string' ? answer.error : undefined;
    throw new PlatformError(label, response.status, code, code ?? 'no error code');
  }
}

interface SlackInteraction {
  type?: string;
  user?: { id?: string };
  trigger_id?: string;
  view?: {
    callback_id?: string;
    private_metadata?: string;
    state?: { values?: Record<string, Record<string, { value?: unknown; selected_option?: { value?: string } } | undefined> | undefined> };
  };
  actions?: { action_id?: string; block_id?: string; value?: unknown }[];
  container?: { channel_id?: string; message_ts?: string; thread_ts?: string };
  channel?: { id?: string };
  message?: { ts?: string };
}

/** Slack posts interactions as a form whose `payload` field is the JSON. */
function parseInteraction(body: Buffer): SlackInteraction {
  const raw = new URLSearchParams(body.toString('utf8')).get('payload');
  if (raw === null) throw badRequest('A Slack interaction is a form with a payload field.');
  try {
    const parsed: unknown = JSON.parse(raw);
    if (typeof parsed === 'object' && parsed !== null) return parsed as SlackInteraction;
  } catch {
    // answered below
  }
  throw badRequest('The payload of a Slack interaction must be a JSON object.');
}

interface UserMessage {
  kind: 'mention' | 'direct' | 'reply';
  channel: string;
  ts: string;
  /** The thread answered in; undefined for a direct message outside a thread. */
  thread: string | undefined;
  text: string;
}

/** A message typed by a person that the bot answers; bot posts, edits and other subtypes are not. */
function userMessage(event: Record<string, unknown>): UserMessage | undefined {
  const { type, subtype, bot_id: botId, channel, user, text, ts, thread_ts: threadTs, channel_type: channelType } = event;
  if (botId !== undefined || subtype !== undefined) return undefined;
  if (typeof channel !== 'string' || typeof user !== 'string' || typeof text !== 'string' || typeof ts !== 'string') return undefined;
  const thread = typeof threadTs === 'string' ? threadTs : ts;
  // The mention of the bot is not part of what the agent is asked.
  const clean = text.replace(/<@[A-Z0-9]+>/g, '').trim();
  if (type === 'app_mention') return { kind: 'mention', channel, ts, thread, text: clean };
  if (type !== 'message') return undefined;
  // A direct message channel is one conversation unless the person opens a thread in it.
  if (channelType === 'im') return { kind: 'direct', channel, ts, thread: typeof threadTs === 'string' ? threadTs : undefined, text: clean };
  return typeof threadTs === 'string' ? { kind: 'reply', channel, ts, thread, text: clean } : undefined;
}

/** Slack's mrkdwn escapes: &, < and > only. */
function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
