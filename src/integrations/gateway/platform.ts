import type { Middleware } from 'koa';
import type { Approval } from '../../domain/types.js';
import type { ChatPlatformConfig } from './config.js';

export type PlatformName = 'slack' | 'discord' | 'telegram';

/** A place messages go: a channel or chat, and for Slack the thread in it. */
export interface Place {
  channel: string;
  thread?: string;
}

/** A message the gateway posted (an approval, an answer), to edit later. */
export interface MessageRef {
  channel: string;
  /** Slack's `ts`, Discord's message id, Telegram's message_id. */
  message: string;
}

/**
 * One configured chat platform of the gateway: its inbound endpoints (verified, then handed to
 * the gateway core) and the few outbound calls the core makes.
 */
export interface ChatPlatform {
  readonly name: PlatformName;
  readonly config: ChatPlatformConfig;
  /** Serves the platform's endpoints; other paths go to `next`. */
  middleware(): Middleware;
  /** Starts what the platform does on its own (Telegram's polling), once the gateway follows run events. */
  start?(): void;
  /** Stops it, waiting for the update under way; called first when the gateway closes. */
  stop?(): Promise<void>;
  /** Posts an approval with Approve / Reject buttons. */
  postApproval(place: Place, approval: Approval): Promise<MessageRef>;
  /** Edits a posted approval to show how it ended, without its buttons. */
  showOutcome(ref: MessageRef, approval: Approval): Promise<void>;
  /** Posts the agent's answer (or a failure notice, or the start of a streamed answer) in the conversation. */
  postReply(place: Place, text: string): Promise<MessageRef>;
  /** Replaces the text of a posted answer (a streamed answer growing). */
  editReply(ref: MessageRef, text: string): Promise<void>;
}

/**
 * The session of a conversation: `slack:<channel>:<thread ts>`, `discord:<channel>`,
 * `telegram:<chat id>`. Derived, not stored, so every replica finds the conversation of a
 * session (where its approvals and answers go) from the session id alone.
 */
export function sessionOf(platform: PlatformName, place: Place): string {
  return [platform, place.channel, ...(place.thread === undefined ? [] : [place.thread])].join(':');
}

/** The platform and place of a conversation's session, or undefined for any other session. */
export function placeOf(sessionId: string): { platform: PlatformName; place: Place } | undefined {
  const match = /^(slack|discord|telegram):([^:]+)(?::([^:]+))?$/.exec(sessionId);
  if (!match) return undefined;
  return { platform: match[1] as PlatformName, place: { channel: match[2]!, ...(match[3] === undefined ? {} : { thread: match[3] }) } };
}

/** The middleware `steps` one after the other, as one middleware. */
export function chain(steps: readonly Middleware[]): Middleware {
  return (ctx, next) => steps.reduceRight<() => Promise<unknown>>((following, step) => () => Promise.resolve(step(ctx, following)), next)() as Promise<void>;
}
