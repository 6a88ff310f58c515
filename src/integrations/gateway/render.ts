import type { Approval, JsonObject } from '../../domain/types.js';

/** Longest payload excerpt shown in an approval message. */
const PAYLOAD_EXCERPT = 1500;

/** The lines of an approval message: the prompt, then the run's context (and its payload, cut). */
export function approvalLines(approval: Approval): { prompt: string; context: string; payload?: string } {
  const context = `agent ${approval.agent_id} · session ${approval.session_id} · run ${approval.run_id}`;
  if (approval.payload === undefined) return { prompt: approval.prompt, context };
  const json = JSON.stringify(approval.payload, null, 2);
  return { prompt: approval.prompt, context, payload: json.length > PAYLOAD_EXCERPT ? `${json.slice(0, PAYLOAD_EXCERPT)}…` : json };
}

/**
 * How an approval ended, for the edited message: `Approved by <who>`, `Rejected by <who>`,
 * `Rejected: expired`, `Cancelled with its run`. `who` renders a `decided_by` (a platform
 * names its own users its way).
 */
export function outcomeLine(approval: Approval, who: (decidedBy: string) => string): string {
  if (approval.status === 'pending') return 'Pending';
  if (approval.status === 'cancelled') return 'Cancelled with its run';
  const verdict = approval.status === 'approved' ? 'Approved' : 'Rejected';
  if (approval.decided_by === 'timeout') return `${verdict}: expired`;
  return `${verdict} by ${who(approval.decided_by ?? 'someone')}`;
}

/** A `decided_by` of this platform's user (`slack:U1`) → the user id, else undefined. */
export function platformUser(decidedBy: string, platform: string): string | undefined {
  return decidedBy.startsWith(`${platform}:`) ? decidedBy.slice(platform.length + 1) : undefined;
}

/**
 * The answer of a run to post: the state's `reply` when it is a non-empty string (a native
 * agent's reply field), else the text of the last AI message of a LangGraph `messages`
 * channel; undefined when there is neither.
 */
export function replyOf(state: JsonObject | undefined): string | undefined {
  if (!state) return undefined;
  if (typeof state.reply === 'string' && state.reply !== '') return state.reply;
  const messages = Array.isArray(state.messages) ? state.messages : [];
  for (let index = messages.length - 1; index >= 0; index--) {
    const text = aiText(messages[index]);
    if (text !== undefined) return text === '' ? undefined : text;
  }
  return undefined;
}

/**
 * The text of an AI message (or message chunk) in any of the shapes a LangGraph state or a
 * `messages` event holds, `''` for one without text (a tool call); undefined for any other message.
 */
export function aiText(message: unknown): string | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const m = message as Record<string, unknown>;
  const kwargs = (typeof m.kwargs === 'object' && m.kwargs !== null ? m.kwargs : {}) as Record<string, unknown>;
  const serializedId = Array.isArray(m.id) ? m.id.at(-1) : undefined;
  const isAi =
    m.type === 'ai' || m.role === 'assistant' || m.role === 'ai' || serializedId === 'AIMessage' || serializedId === 'AIMessageChunk';
  if (!isAi) return undefined;
  return contentText(m.content ?? kwargs.content);
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (typeof part === 'string' ? part : typeof part?.text === 'string' ? (part.text as string) : ''))
    .join('');
}
