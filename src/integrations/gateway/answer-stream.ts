import type { InFlight } from '../shared/in-flight.js';
import type { ChatPlatform, MessageRef, Place } from './platform.js';
import { aiText } from './render.js';

/** A streamed answer's message is edited at most this often (platforms rate-limit edits, Slack to about one a second). */
export const STREAM_EDIT_EVERY_MS = 1000;
/** Answers streamed at once per replica; past it the oldest is forgotten (its run's end then posts the answer anew). */
const MAX_STREAMS = 1000;

interface Stream {
  platform: ChatPlatform;
  place: Place;
  /** Whether this replica answers the run: the claim every replica tries on the run's first token. */
  owned: Promise<boolean>;
  /** Every token heard so far, joined (of the latest AI message, for a LangGraph graph's tokens). */
  text: string;
  /** The id of the AI message whose tokens `text` holds (LangGraph `messages` events). */
  messageId?: string;
  /** What the message shows. */
  shown: string;
  ref?: MessageRef;
  /** When the last show was started (ms since the epoch). */
  lastShownAt: number;
  timer?: NodeJS.Timeout;
  /** The post and edits, one after the other. */
  chain: Promise<void>;
}

/** A run's streamed answer, handed over at the run's end ({@link AnswerStreams.end}). */
export interface EndedStream {
  owned: Promise<boolean>;
  /** Every token heard. */
  text: string;
  /** Shows `text` as the answer: edits the streamed message once the edits under way are done (or posts it when none was). */
  show(text: string): Promise<void>;
}

/** The `custom` events whose data streams an answer. */
export type TokenEventName = 'token' | 'messages';

/**
 * The answers of conversation runs streamed by editing one message as tokens arrive: a run's
 * `custom` events named `token` (data a string, `{ text }` appended as is, or `{ word }`
 * appended after a space), and those named `messages` (a LangGraph graph's model tokens: AI
 * message chunks, joined per message id; a new AI message starts the text anew, as the answer
 * is the last one; other messages are not shown). The first token posts the message, the next
 * ones edit it at most once per {@link STREAM_EDIT_EVERY_MS}; the run's end shows the whole
 * answer in a last edit.
 * Every replica hears every token and keeps the text; the one whose claim of the run's answer
 * succeeded (on the first token) posts and edits.
 */
export class AnswerStreams {
  private readonly streams = new Map<string, Stream>();

  constructor(
    private readonly claimAnswer: (platform: ChatPlatform, runId: string) => Promise<boolean>,
    private readonly tasks: InFlight,
  ) {}

  /** A token event of the answer of `runId`, in `place`; tokens must be handed in the order they were emitted. */
  token(platform: ChatPlatform, place: Place, runId: string, name: TokenEventName, data: unknown): void {
    const piece = name === 'messages' ? messagePiece(data) : tokenPiece(data);
    if (piece === undefined) return;
    const key = `${platform.name}:${runId}`;
    let stream = this.streams.get(key);
    if (!stream) {
      stream = { platform, place, owned: this.claimAnswer(platform, runId), text: '', shown: '', lastShownAt: 0, chain: Promise.resolve() };
      this.streams.set(key, stream);
      if (this.streams.size > MAX_STREAMS) this.forget(this.streams.keys().next().value!);
    }
    if (piece.messageId !== undefined && piece.messageId !== stream.messageId) {
      stream.messageId = piece.messageId;
      stream.text = '';
    }
    stream.text = piece.spaced && stream.text !== '' ? `${stream.text} ${piece.text}` : stream.text + piece.text;
    this.schedule(stream);
  }

  /** The run ended: its stream, no longer edited on its own; undefined when no token of it was heard here. */
  end(platform: ChatPlatform, runId: string): EndedStream | undefined {
    const stream = this.forget(`${platform.name}:${runId}`);
    if (!stream) return undefined;
    return {
      owned: stream.owned,
      text: stream.text,
      show: async (text) => {
        await stream.chain;
        if (stream.ref === undefined) await platform.postReply(stream.place, text);
        else if (text !== stream.shown) await platform.editReply(stream.ref, text);
      },
    };
  }

  /** Stops every pending edit (the process stops). */
  close(): void {
    for (const key of [...this.streams.keys()]) this.forget(key);
  }

  private forget(key: string): Stream | undefined {
    const stream = this.streams.get(key);
    this.streams.delete(key);
    clearTimeout(stream?.timer);
    return stream;
  }

  private schedule(stream: Stream): void {
    if (stream.timer !== undefined) return;
    const wait = Math.max(0, stream.lastShownAt + STREAM_EDIT_EVERY_MS - Date.now());
    stream.timer = setTimeout(() => {
      stream.timer = undefined;
      // Counted from now, not from when the show starts: a token heard meanwhile waits its second.
      stream.lastShownAt = Date.now();
      stream.chain = stream.chain.then(() => this.tasks.run(() => this.showNow(stream)));
    }, wait);
  }

  private async showNow(stream: Stream): Promise<void> {
    if (!(await stream.owned)) return;
    const text = stream.text;
    if (text.trim() === '' || text === stream.shown) return;
    if (stream.ref === undefined) stream.ref = await stream.platform.postReply(stream.place, text);
    else await stream.platform.editReply(stream.ref, text);
    stream.shown = text;
  }
}

/** What one token event adds: its text, whether it is a word (joined with a space), the AI message it belongs to. */
interface Piece {
  text: string;
  spaced: boolean;
  messageId?: string;
}

/** The text of a `token` event's data, and whether it is a word (joined with a space). */
function tokenPiece(data: unknown): Piece | undefined {
  if (typeof data === 'string') return { text: data, spaced: false };
  if (typeof data !== 'object' || data === null) return undefined;
  const { text, word } = data as { text?: unknown; word?: unknown };
  if (typeof text === 'string') return { text, spaced: false };
  if (typeof word === 'string') return { text: word, spaced: true };
  return undefined;
}

/** A `messages` event's AI message chunk (a LangGraph graph's model tokens); undefined for any other message. */
function messagePiece(data: unknown): Piece | undefined {
  const text = aiText(data);
  if (text === undefined) return undefined;
  const id = (data as { id?: unknown }).id;
  return { text, spaced: false, ...(typeof id === 'string' ? { messageId: id } : {}) };
}
