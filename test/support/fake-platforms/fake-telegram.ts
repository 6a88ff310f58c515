import { RecordingServer, type Answer, type RecordedCall } from './recording-server.js';

/** An update as a test pushes it; the fake assigns `update_id`. */
export type PushedUpdate = Record<string, unknown>;

/** Telegram's error answer: `{ok:false,error_code,description,parameters?}` with that HTTP status. */
export function telegramError(errorCode: number, description: string, parameters?: Record<string, unknown>): Answer {
  return { status: errorCode, body: { ok: false, error_code: errorCode, description, ...(parameters ? { parameters } : {}) } };
}

/**
 * A fake Telegram Bot API on `/bot<token>/<method>`. getUpdates behaves like Telegram's: an
 * `offset` confirms (drops) every update below it, and with nothing to return the call is held
 * up to its `timeout` seconds or until an update is pushed; a getUpdates arriving while another
 * is held is counted ({@link overlappingPolls}: two pollers of one bot). sendMessage refuses
 * Markdown that Telegram could not parse. Tests queue failures on `server`.
 */
export class FakeTelegram {
  private readonly pending: { update_id: number; [key: string]: unknown }[] = [];
  private readonly waiters = new Set<() => void>();
  private nextUpdateId = 100;
  private nextMessageId = 1;
  /** The getUpdates calls being held, each with its client's going away. */
  private readonly polls = new Set<AbortSignal>();
  readonly webhooks: { url: string; secret_token?: string }[] = [];
  /** Long polls (getUpdates with a timeout) that arrived while another was held (Telegram answers 409 to one of them). */
  overlappingPolls = 0;
  /** Held getUpdates calls whose client went away before the answer (a poller stopping at once). */
  abandonedPolls = 0;

  private constructor(
    readonly server: RecordingServer,
    private readonly botToken: string,
  ) {}

  static async start(botToken: string): Promise<FakeTelegram> {
    const holder: { fake?: FakeTelegram } = {};
    const server = await RecordingServer.start((call, closed) => holder.fake!.respond(call, closed));
    holder.fake = new FakeTelegram(server, botToken);
    return holder.fake;
  }

  get url(): string {
    return this.server.url;
  }

  /** Queues an update for getUpdates and returns its update_id. */
  push(update: PushedUpdate): number {
    const updateId = this.nextUpdateId++;
    this.pending.push({ update_id: updateId, ...update });
    for (const wake of this.waiters) wake();
    return updateId;
  }

  /** Recorded calls of one Bot API method. */
  calls(method: string): RecordedCall[] {
    return this.server.callsTo(`/bot${this.botToken}/${method}`);
  }

  /** update_ids Telegram still keeps, i.e. not yet confirmed by a getUpdates offset above them. */
  get unconfirmed(): number[] {
    return this.pending.map((update) => update.update_id);
  }

  close(): Promise<void> {
    for (const wake of this.waiters) wake();
    return this.server.close();
  }

  private async respond(call: RecordedCall, closed: AbortSignal): Promise<Answer> {
    const prefix = `/bot${this.botToken}/`;
    if (!call.path.startsWith(prefix)) return telegramError(401, 'Unauthorized');
    const params = (call.body ?? {}) as Record<string, unknown>;
    switch (call.path.slice(prefix.length)) {
      case 'getUpdates':
        return this.getUpdates(params, closed);
      case 'sendMessage':
      case 'editMessageText':
        return this.sendMessage(params);
      case 'answerCallbackQuery':
        return ok(true);
      case 'setWebhook':
        this.webhooks.push(params as { url: string; secret_token?: string });
        return ok(true);
      case 'deleteWebhook':
        return ok(true);
      default:
        return telegramError(404, 'Not Found');
    }
  }

  private async getUpdates(params: Record<string, unknown>, closed: AbortSignal): Promise<Answer> {
    const offset = Number(params.offset ?? 0);
    const limit = Number(params.limit ?? 100);
    const timeoutSec = Number(params.timeout ?? 0);
    while (this.pending.length > 0 && this.pending[0]!.update_id < offset) this.pending.shift();
    // A long poll while another is held; a poll whose client went away (a stopped poller) no
    // longer counts, nor does a stopping poller's confirmation (timeout 0) racing its own abort.
    if (timeoutSec > 0 && [...this.polls].some((other) => !other.aborted)) this.overlappingPolls += 1;
    this.polls.add(closed);
    try {
      if (this.pending.length === 0 && timeoutSec > 0) await this.wait(timeoutSec * 1000, closed);
    } finally {
      this.polls.delete(closed);
      if (closed.aborted) this.abandonedPolls += 1;
    }
    return ok(this.pending.slice(0, limit));
  }

  /** Resolves on the next push, the timeout or the client going away, leaving no timer behind. */
  private wait(ms: number, closed: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        closed.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
      closed.addEventListener('abort', done, { once: true });
    });
  }

  private sendMessage(params: Record<string, unknown>): Answer {
    const text = String(params.text ?? '');
    if (text === '') return telegramError(400, 'Bad Request: message text is empty');
    if (params.parse_mode === 'Markdown') {
      const problem = legacyMarkdownProblem(text);
      if (problem) return telegramError(400, `Bad Request: can't parse entities: ${problem}`);
    }
    const messageId = params.message_id === undefined ? this.nextMessageId++ : Number(params.message_id);
    return ok({ message_id: messageId, chat: { id: params.chat_id }, date: 1_700_000_000, text: unescapeMarkdown(text) });
  }
}

function ok(result: unknown): Answer {
  return { status: 200, body: { ok: true, result } };
}

/** Telegram's legacy Markdown: `_`, `*` and `` ` `` must be closed, `[` must form a link; `\` escapes them. */
function legacyMarkdownProblem(text: string): string | undefined {
  let open: { char: string; at: number } | undefined;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === '\\' && '_*`['.includes(text[i + 1] ?? '') && open === undefined) {
      i++;
    } else if (open !== undefined) {
      if (char === open.char) open = undefined;
    } else if (char === '_' || char === '*' || char === '`') {
      open = { char, at: i };
    } else if (char === '[') {
      const end = /^\[[^\]]*\]\([^)]*\)/.exec(text.slice(i));
      if (!end) return `Can't find end of the entity starting at byte offset ${i}`;
      i += end[0].length - 1;
    }
  }
  return open ? `Can't find end of the entity starting at byte offset ${open.at}` : undefined;
}

function unescapeMarkdown(text: string): string {
  return text.replace(/\\([_*`[])/g, '$1');
}
