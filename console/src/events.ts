import type { Api } from './api.js';
import { messageOf } from './errors.js';
import type { RunEvent } from './types.js';

export type StreamStatus = 'connecting' | 'live' | 'stopped';

export interface EventStreamOptions {
  /** Only this session's events. */
  session?: string;
  /** Resume after this id: every retained event after it comes first, then live ones. */
  lastEventId?: string;
  onEvent(id: string, event: RunEvent): void;
  onStatus(status: StreamStatus, error?: string): void;
}

/**
 * GET /api/events/stream through the typed client, which reads it with fetch (so the
 * credential travels in a header: EventSource cannot send one, and a credential never goes
 * into a URL) and reconnects after the server's `retry:` delay, resuming after the last id
 * received: no event is missed or repeated. Stops on an answer a retry cannot mend (401, 403…).
 * Returns the function that closes it.
 */
export function openEventStream(api: Api, options: EventStreamOptions): () => void {
  const abort = new AbortController();
  const follow = async (): Promise<void> => {
    options.onStatus('connecting');
    try {
      const events = api.client.events.stream({
        ...(options.session ? { session: options.session } : {}),
        ...(options.lastEventId ? { lastEventId: options.lastEventId } : {}),
        signal: abort.signal,
        onConnect: () => options.onStatus('live'),
      });
      for await (const { id, event } of events) options.onEvent(id, event);
      options.onStatus('stopped');
    } catch (error) {
      if (!abort.signal.aborted) options.onStatus('stopped', messageOf(error));
    }
  };
  void follow();
  return () => abort.abort();
}

/** An event id just before `iso`: resuming after it replays everything from that time on. */
export function eventIdBefore(iso: string): string {
  return `${Math.max(0, Date.parse(iso) - 1)}-0`;
}
