/** One dispatched server-sent event: the stream's last event id at that point, and its data. */
export interface SseMessage {
  /** The `id:` in force when the event was dispatched (the id to resume after); `''` if none yet. */
  id: string;
  /** `event:` field, `message` when absent. */
  event: string;
  /** The `data:` lines joined with `\n`. */
  data: string;
}

export interface ReadSseOptions {
  /** Called with each `retry:` value (milliseconds), the reconnection delay the server asks for. */
  onRetry?: (ms: number) => void;
}

/**
 * Parses a `text/event-stream` body as the WHATWG EventSource does (fields, `:` comments, CR,
 * LF and CRLF line ends, multi-line data) and yields each dispatched event. Uses only fetch's
 * ReadableStream and TextDecoder, so it runs in browsers as well as in Node. Ending the
 * iteration early cancels the body.
 */
export async function* readSse(body: ReadableStream<Uint8Array>, options: ReadSseOptions = {}): AsyncGenerator<SseMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const frame = new SseFrameParser(options.onRetry);
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      let text = buffer + (done ? decoder.decode() : decoder.decode(value, { stream: true }));
      // A CR at the end of a chunk may be the first half of a CRLF: keep it for the next one.
      const held = !done && text.endsWith('\r') ? '\r' : '';
      if (held) text = text.slice(0, -1);
      const lines = text.split(/\r\n|\r|\n/);
      // The last piece is an unfinished line; at the end of the stream it is dropped (as EventSource does).
      buffer = lines.pop()! + held;
      for (const line of lines) {
        const message = frame.line(line);
        if (message) yield message;
      }
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** The per-line state machine of the EventSource parser. */
class SseFrameParser {
  private lastId = '';
  private event = '';
  private data: string[] = [];

  constructor(private readonly onRetry?: (ms: number) => void) {}

  /** Takes one line; returns the event a blank line dispatches. */
  line(line: string): SseMessage | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) this.lastId = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.onRetry?.(Number(value));
    return undefined;
  }

  private dispatch(): SseMessage | undefined {
    const data = this.data;
    const event = this.event || 'message';
    this.data = [];
    this.event = '';
    if (data.length === 0) return undefined;
    return { id: this.lastId, event, data: data.join('\n') };
  }
}
