import type { Logger } from 'pino';
import { isAppError } from '../../domain/errors.js';
import type { Approval, StoredEvent } from '../../domain/types.js';
import type { Deduplicator, Notes } from '../../ports/deduplicator.js';
import type { EventBus } from '../../ports/event-bus.js';
import type { RunControl } from '../../ports/run-control.js';
import type { Store } from '../../ports/store.js';
import { InFlight } from '../shared/in-flight.js';
import { AnswerStreams } from './answer-stream.js';
import { placeOf, sessionOf, type ChatPlatform, type MessageRef, type Place, type PlatformName } from './platform.js';
import { replyOf } from './render.js';

/** How long a claim on a message, a post or an edit is kept: far longer than any platform retries. */
const CLAIM_TTL_MS = 24 * 60 * 60 * 1000;
/** How long where an approval without expiry was posted is kept: a month, past which its message keeps its buttons. */
const REF_TTL_MS = 30 * 24 * 60 * 60 * 1000;

export interface GatewayDeps {
  runs: RunControl;
  store: Store;
  events: EventBus;
  /**
   * The backend's: shared by every replica on Redis, so each post and edit is made once, and
   * any replica finds where an approval was posted (a note per approval) to edit it.
   */
  deduplicator: Deduplicator & Notes;
  logger: Logger;
}

/** What a press of an approval button came to. */
export type PressOutcome = 'decided' | 'not_allowed' | 'already_decided' | 'not_found';

/** The text a refused press shows its presser. */
export const PRESS_REFUSALS: Readonly<Record<Exclude<PressOutcome, 'decided'>, string>> = {
  not_allowed: 'You may not decide approvals.',
  already_decided: 'This approval was already decided.',
  not_found: 'This approval does not exist any more.',
};

/**
 * The platform-independent half of the chat gateway. Inbound, platforms hand it messages
 * (started as runs of the platform's agent on the conversation's session) and button presses
 * (decided through `RunControl.answerApproval`, as POST /api/approval/respond). Outbound, it
 * follows the run events of each tenant: an `interrupted` run's approval is posted, an
 * `approval_decided` (any decider: a button, the console, the API, a timeout) or a `cancelled`
 * run edits the approval's message, a `completed` or `failed` run of a conversation posts its
 * answer (streamed while the run emits `token` events, or a LangGraph graph's model tokens as
 * `messages` events: {@link AnswerStreams}). Every replica hears every event; a claim in the backend's deduplicator lets exactly
 * one of them act on each (post, edit, answer), and where each approval was posted is a note
 * there, so a replica edits a message another replica (since stopped) posted.
 */
export class GatewayCore {
  private readonly platforms = new Map<PlatformName, ChatPlatform>();
  private readonly tasks: InFlight;
  private readonly streams: AnswerStreams;
  private readonly unsubscribe: (() => void)[] = [];
  /** Set by {@link close}: the platforms' endpoints answer 503 from then on. */
  closing = false;

  constructor(private readonly deps: GatewayDeps) {
    this.tasks = new InFlight((error) => deps.logger.error({ err: error }, 'chat gateway task failed'));
    this.streams = new AnswerStreams((platform, runId) => this.claim(`${platform.name}:answer:${runId}`), this.tasks);
  }

  /** Adds a platform; call before {@link start}. */
  add(platform: ChatPlatform): void {
    this.platforms.set(platform.name, platform);
  }

  /** Follows the events of every tenant a platform serves; resolves once live delivery is established. */
  async start(): Promise<void> {
    for (const tenant of new Set([...this.platforms.values()].map((p) => p.config.tenant))) {
      this.unsubscribe.push(this.deps.events.subscribe(tenant, (event) => this.heard(tenant, event)));
    }
    await this.deps.events.ready(10_000);
    for (const platform of this.platforms.values()) platform.start?.();
  }

  /** Refuses new requests (503), stops polling, stops following events and waits for the posts and edits under way. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.platforms.values()].map((platform) => platform.stop?.()));
    for (const stop of this.unsubscribe.splice(0)) stop();
    this.streams.close();
    await this.tasks.drain();
  }

  /** Claims `key` once across every replica: false when another delivery or replica has it. */
  claim(key: string): Promise<boolean> {
    return this.deps.deduplicator.claim(`chat:${key}`, CLAIM_TTL_MS);
  }

  /** Gives up a claim whose work failed, so the platform's retry is handled. */
  release(key: string): Promise<void> {
    return this.deps.deduplicator.release(`chat:${key}`);
  }

  /** Whether a conversation's session exists (a thread reply without a mention continues one only). */
  async conversationExists(platform: ChatPlatform, place: Place): Promise<boolean> {
    return (await this.deps.store.sessions.getSession(platform.config.tenant, sessionOf(platform.name, place))) !== null;
  }

  /**
   * A user's message: starts a run of the platform's agent on the conversation's session, after
   * a run still active there (`multitask: enqueue`). Its answer is posted when it ends.
   */
  async converse(platform: ChatPlatform, place: Place, text: string): Promise<void> {
    const { agent, tenant } = platform.config;
    if (agent === undefined) return;
    const session_id = sessionOf(platform.name, place);
    const ticket = await this.deps.runs.startRun(tenant, {
      agent_id: agent,
      session_id,
      input: { messages: [{ role: 'user', content: text }] },
      multitask: 'enqueue',
    });
    this.deps.logger.info({ platform: platform.name, session_id, run_id: ticket.run_id }, 'chat message started a run');
  }

  /**
   * A press of Approve or Reject by `userId` on the message `ref` (or the submission of a
   * decision dialog, with its `comment`): refused unless the user is an approver; else decided
   * with `decided_by: "<platform>:<user id>"`. A second press or a replay is `already_decided`
   * and changes nothing. The message is edited when the decision is heard.
   */
  async press(platform: ChatPlatform, approvalId: string, approved: boolean, userId: string, ref: MessageRef, comment = ''): Promise<PressOutcome> {
    const role = platform.config.approvers.get(userId);
    if (role === undefined) return 'not_allowed';
    // Noted before deciding (a message the gateway did not post, or whose note expired), so the replica hearing the decision edits it.
    await this.noteRef(platform, approvalId, ref, undefined);
    try {
      await this.deps.runs.answerApproval(platform.config.tenant, approvalId, { approved, comment, decided_by: `${platform.name}:${userId}` });
    } catch (error) {
      if (isAppError(error) && error.code === 'conflict') return 'already_decided';
      if (isAppError(error) && error.code === 'not_found') return 'not_found';
      throw error;
    }
    this.deps.logger.info({ platform: platform.name, approval_id: approvalId, approved, user: userId, role }, 'chat approval decided');
    return 'decided';
  }

  private heard(tenant: string, stored: StoredEvent): void {
    const { event } = stored;
    for (const platform of this.platforms.values()) {
      if (platform.config.tenant !== tenant) continue;
      if (event.type === 'interrupted' && event.approval_id) void this.tasks.run(() => this.postApproval(platform, event.approval_id!, event.session));
      if (event.type === 'approval_decided' && event.approval_id) void this.tasks.run(() => this.showOutcome(platform, event.approval_id!));
      if (event.type === 'custom' && (event.name === 'token' || event.name === 'messages')) {
        const owner = placeOf(event.session);
        if (owner?.platform === platform.name) this.streams.token(platform, owner.place, event.run_id, event.name, event.data);
      }
      if (event.type === 'cancelled') {
        void this.tasks.run(() => this.showCancelled(platform, tenant, event.run_id));
        const stream = this.streams.end(platform, event.run_id);
        // What was streamed stays shown, whole.
        if (stream) void this.tasks.run(async () => ((await stream.owned) ? stream.show(stream.text) : undefined));
      }
      if (event.type === 'completed' || event.type === 'failed') void this.tasks.run(() => this.answer(platform, tenant, stored));
    }
  }

  /** Where a run's approval goes on `platform`: its conversation, else the approvals channel unless another platform's conversation has it. */
  private approvalPlace(platform: ChatPlatform, sessionId: string): Place | undefined {
    const owner = placeOf(sessionId);
    if (owner && owner.platform === platform.name) return owner.place;
    if (owner && this.platforms.get(owner.platform)?.config.tenant === platform.config.tenant) return undefined;
    return platform.config.approvalsTarget === undefined ? undefined : { channel: platform.config.approvalsTarget };
  }

  private async postApproval(platform: ChatPlatform, approvalId: string, sessionId: string): Promise<void> {
    if (platform.config.approvers.size === 0) return;
    const place = this.approvalPlace(platform, sessionId);
    if (!place) return;
    const key = `${platform.name}:post:${approvalId}`;
    if (!(await this.claim(key))) return;
    const approval = await this.deps.store.approvals.getApproval(platform.config.tenant, approvalId);
    if (approval?.status !== 'pending') return;
    let ref: MessageRef;
    try {
      ref = await platform.postApproval(place, approval);
    } catch (error) {
      await this.release(key);
      throw error;
    }
    await this.noteRef(platform, approvalId, ref, approval);
    this.deps.logger.info({ platform: platform.name, approval_id: approvalId, channel: ref.channel, message: ref.message }, 'chat approval posted');
    // Decided while it was being posted: the decision's event found no message to edit.
    const now = await this.deps.store.approvals.getApproval(platform.config.tenant, approvalId);
    if (now && now.status !== 'pending') await this.showOutcome(platform, approvalId);
  }

  private async showOutcome(platform: ChatPlatform, approvalId: string): Promise<void> {
    const noted = await this.deps.deduplicator.noted(refKey(platform, approvalId));
    if (noted === undefined) return;
    const approval = await this.deps.store.approvals.getApproval(platform.config.tenant, approvalId);
    if (!approval || approval.status === 'pending') return;
    if (!(await this.claim(`${platform.name}:edit:${approvalId}`))) return;
    await platform.showOutcome(JSON.parse(noted) as MessageRef, approval);
  }

  /** A cancelled run's latest approval, if it was posted, shows it was cancelled with its run. */
  private async showCancelled(platform: ChatPlatform, tenant: string, runId: string): Promise<void> {
    const run = await this.deps.store.runs.getRun(tenant, runId);
    if (run?.approval_id !== undefined) await this.showOutcome(platform, run.approval_id);
  }

  private async answer(platform: ChatPlatform, tenant: string, stored: StoredEvent): Promise<void> {
    const { event } = stored;
    const owner = placeOf(event.session);
    if (!owner || owner.platform !== platform.name) return;
    // Streamed: the replica that claimed the answer at its first token shows it whole in its message.
    const stream = this.streams.end(platform, event.run_id);
    if (stream ? !(await stream.owned) : !(await this.claim(`${platform.name}:answer:${event.run_id}`))) return;
    const show = (text: string) => (stream ? stream.show(text) : platform.postReply(owner.place, text).then(() => undefined));
    if (event.type === 'failed') {
      const failure = `The agent failed: ${event.error ?? 'unknown error'}`;
      await show(stream && stream.text.trim() !== '' ? `${stream.text}\n\n${failure}` : failure);
      return;
    }
    const run = await this.deps.store.runs.getRun(tenant, event.run_id);
    const checkpoint = await this.deps.store.sessions.getCheckpoint(tenant, event.session, run?.seq_num);
    const reply = replyOf(checkpoint?.state) ?? (stream?.text.trim() ? stream.text : undefined);
    if (reply !== undefined) await show(reply);
  }

  /** Notes where an approval's message is, for as long as the approval can be decided (and a day more). */
  private async noteRef(platform: ChatPlatform, approvalId: string, ref: MessageRef, approval: Approval | undefined): Promise<void> {
    const expires = approval?.expires_at === undefined ? undefined : Date.parse(approval.expires_at) - Date.now() + CLAIM_TTL_MS;
    await this.deps.deduplicator.note(refKey(platform, approvalId), JSON.stringify({ channel: ref.channel, message: ref.message }), Math.max(CLAIM_TTL_MS, expires ?? REF_TTL_MS));
  }
}

/** The note of where an approval's message is on a platform. */
function refKey(platform: ChatPlatform, approvalId: string): string {
  return `chat:ref:${platform.name}:${approvalId}`;
}
