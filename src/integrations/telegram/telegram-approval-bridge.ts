import type { Logger } from 'pino';
import { isAppError } from '../../domain/errors.js';
import { DEFAULT_TENANT, type Approval } from '../../domain/types.js';
import type { RunControl } from '../../ports/run-control.js';
import type { ApprovalStore } from '../../ports/store.js';
import { silentLogger } from '../shared/silent-logger.js';
import { approvalButtonData, parseApprovalButton } from './approval-button.js';
import type { TelegramAdapter } from './telegram-adapter.js';
import type { TelegramCallbackQuery } from './telegram-types.js';

/** Pending approvals read per page by {@link TelegramApprovalBridge.postPending}. */
const PENDING_PAGE = 100;

export interface TelegramApprovalBridgeOptions {
  telegram: Pick<TelegramAdapter, 'sendInlineKeyboard' | 'answerCallbackQuery' | 'editMessageText'>;
  runControl: RunControl;
  /** The chat approvals are posted to; presses from other chats are refused. */
  chatId: number;
  /** Tenant whose approvals are posted and decided. @defaultValue 'DefaultTenant' */
  tenant?: string;
  /** When set, only these Telegram users may decide. @defaultValue everyone in the chat */
  allowedUserIds?: readonly number[];
  /** Source of pending approvals for {@link TelegramApprovalBridge.postPending}. */
  approvals?: Pick<ApprovalStore, 'listPendingApprovals'>;
  /** @defaultValue a silent logger */
  logger?: Logger;
}

/** Answer shown to whoever presses a button of an approval decided in the meantime. */
export const ALREADY_DECIDED_TEXT = 'This approval was already decided.';

/**
 * Human approvals in a Telegram chat. A pending approval is posted with Approve / Reject
 * buttons; a press decides it through `RunControl.answerApproval`, exactly as
 * POST /api/approval/respond does (one atomic decision, the run resumed on a worker), and the
 * presser sees the outcome in answerCallbackQuery: a conflict (someone decided first) is
 * "already decided". Wire it with `adapter.onCallbackQuery((q) => bridge.handleCallbackQuery(q))`.
 */
export class TelegramApprovalBridge {
  private readonly tenant: string;
  private readonly logger: Logger;
  /** Approvals posted and still pending, so that postPending posts each once. */
  private readonly posted = new Set<string>();

  constructor(private readonly options: TelegramApprovalBridgeOptions) {
    this.tenant = options.tenant ?? DEFAULT_TENANT;
    this.logger = options.logger ?? silentLogger();
  }

  /** Posts one approval with its buttons. */
  async postApproval(approval: Approval): Promise<void> {
    const text = `Approval requested: ${approval.prompt}\nAgent ${approval.agent_id}, session ${approval.session_id}, run ${approval.run_id}`;
    await this.options.telegram.sendInlineKeyboard(this.options.chatId, text, [
      [
        { text: 'Approve', callbackData: approvalButtonData(true, approval.id) },
        { text: 'Reject', callbackData: approvalButtonData(false, approval.id) },
      ],
    ]);
  }

  /**
   * Posts every pending approval of the tenant not posted yet, oldest first, and returns how
   * many it posted; call it on a timer or after an `interrupted` event.
   */
  async postPending(): Promise<number> {
    if (!this.options.approvals) throw new Error('postPending needs the approvals option');
    const pending = [];
    for (let offset = 0; ; offset += PENDING_PAGE) {
      const page = await this.options.approvals.listPendingApprovals(this.tenant, { offset, limit: PENDING_PAGE });
      pending.push(...page);
      if (page.length < PENDING_PAGE) break;
    }
    const pendingIds = new Set(pending.map((approval) => approval.id));
    for (const id of this.posted) if (!pendingIds.has(id)) this.posted.delete(id);
    let count = 0;
    for (const approval of pending.filter((candidate) => !this.posted.has(candidate.id))) {
      // Marked before the await so that an overlapping call does not post it twice.
      this.posted.add(approval.id);
      try {
        await this.postApproval(approval);
        count++;
      } catch (error) {
        this.posted.delete(approval.id);
        throw error;
      }
    }
    return count;
  }

  /** Decides the approval a button names and tells the presser the outcome. */
  async handleCallbackQuery(query: TelegramCallbackQuery): Promise<void> {
    const match = parseApprovalButton(query.data);
    const { telegram, allowedUserIds, chatId } = this.options;
    if (!match) return telegram.answerCallbackQuery(query.id, 'This button is not an approval.');
    if (query.message?.chat.id !== chatId) return telegram.answerCallbackQuery(query.id, 'Approvals are decided in the approvals chat only.', true);
    if (allowedUserIds && !allowedUserIds.includes(query.from.id)) {
      return telegram.answerCallbackQuery(query.id, 'You may not decide approvals.', true);
    }
    const { approved, approvalId } = match;
    try {
      // No comment can be typed on a button; '' is what the HTTP route records without one.
      const decision = { approved, comment: '', decided_by: `telegram:${query.from.id}` };
      await this.options.runControl.answerApproval(this.tenant, approvalId, decision);
    } catch (error) {
      return telegram.answerCallbackQuery(query.id, this.refusal(error, approvalId), true);
    }
    await telegram.answerCallbackQuery(query.id, approved ? 'Approved.' : 'Rejected.');
    const who = query.from.username === undefined ? (query.from.first_name ?? String(query.from.id)) : `@${query.from.username}`;
    const outcome = `${query.message.text ?? 'Approval'}\n\n${approved ? 'Approved' : 'Rejected'} by ${who}`;
    // The decision stands even if the message cannot be updated; only its buttons stay.
    await telegram.editMessageText(chatId, query.message.message_id, outcome).catch((error: unknown) => {
      this.logger.warn({ err: error, approval_id: approvalId }, 'could not update the approval message');
    });
  }

  /** The text a refused decision shows; unexpected failures are logged. */
  private refusal(error: unknown, approvalId: string): string {
    if (isAppError(error) && error.code === 'conflict') return ALREADY_DECIDED_TEXT;
    if (isAppError(error) && error.code === 'not_found') return 'This approval does not exist any more.';
    this.logger.error({ err: error, approval_id: approvalId }, 'Telegram approval decision failed');
    return 'The decision could not be recorded; please try again.';
  }
}
