import type { RunEvent, StoredEvent } from '../domain/types.js';

export type EventListener = (event: StoredEvent) => void;

/**
 * Run events: published by workers, delivered to SSE clients on every replica.
 * Each tenant retains its newest `SERVICE_EVENTS_RETAIN` events for replay; ids increase
 * within a tenant and compare with {@link compareEventIds}.
 *
 * Live delivery is ordered and gap-free per tenant while a listener stays subscribed: an
 * adapter that can lose announcements (Redis pub/sub during a disconnect) catches up from
 * the retained log before it delivers anything newer.
 */
export interface EventBus {
  /** Appends the event to the tenant's retained log, announces it, and returns its id. */
  publish(tenant: string, event: RunEvent): Promise<string>;
  /** Retained events of the tenant strictly after `afterId`, oldest first, at most `count`. */
  readAfter(tenant: string, afterId: string, count: number): Promise<StoredEvent[]>;
  /** Live events of one tenant from now on. Returns the function that unsubscribes. */
  subscribe(tenant: string, listener: EventListener): () => void;
  /**
   * Resolves once live delivery is established in this process, so that an event published
   * after it resolves reaches the listeners subscribed before. Rejects after `timeoutMs`.
   */
  ready(timeoutMs: number): Promise<void>;
  /** Number of live listeners in this process (leak checks). */
  listenerCount(): number;
  close(): Promise<void>;
}

/**
 * What a client may send as an event id: the Redis stream form `<ms>-<seq>`, each part short
 * enough to stay a valid stream id and an exact JavaScript number.
 */
export const EVENT_ID_PATTERN = /^\d{1,15}-\d{1,15}$/;

/** Event ids are Redis stream ids `<ms>-<seq>`; both adapters use that form. */
export function compareEventIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am !== bm ? am - bm : as - bs;
}

/** Reads retained events after an id, oldest first, at most `count` (an EventBus's `readAfter`). */
export type ReadAfter = (afterId: string, count: number) => Promise<StoredEvent[]>;

/**
 * The seam between a replay and live delivery, for one tenant: live events are held while
 * {@link EventSeam.catchUp} reads the retained log after an id, then released; every event
 * reaches `deliver` once, in id order (ids at or below the last delivered one are skipped).
 * Used by each SSE stream that resumes after `Last-Event-ID`, and by the Redis adapter to
 * recover announcements lost while its subscriber was disconnected.
 */
export class EventSeam {
  /** Id of the last delivered event. */
  lastId: string | undefined;
  private held: StoredEvent[] | undefined;
  private overflowed = false;

  /**
   * @param deliver receives each event once, in order
   * @param maxHeld live events held during a catch-up; past it they are dropped and read
   *   again from the retained log. @defaultValue 10000
   */
  constructor(
    private readonly deliver: (event: StoredEvent) => void,
    private readonly maxHeld = 10_000,
  ) {}

  /** True while live events are held for a catch-up. */
  get holding(): boolean {
    return this.held !== undefined;
  }

  /** Holds live events from now until the next catch-up completes. */
  hold(): void {
    this.held ??= [];
  }

  /** A live event: held during a catch-up, delivered otherwise. */
  push(event: StoredEvent): void {
    if (!this.held) return this.emit(event);
    if (this.held.length < this.maxHeld) return void this.held.push(event);
    // Too many to keep: forget them; catchUp reads them again from the retained log.
    this.held = [];
    this.overflowed = true;
  }

  /**
   * Delivers every retained event after `fromId` (or after the last delivered one, if later),
   * page by page, then the held live events. On a read error it keeps holding and rethrows,
   * so the caller may retry.
   */
  async catchUp(read: ReadAfter, fromId: string, pageSize = 500): Promise<void> {
    this.hold();
    let cursor = this.lastId && compareEventIds(this.lastId, fromId) > 0 ? this.lastId : fromId;
    for (;;) {
      const page = await read(cursor, pageSize);
      for (const event of page) this.emit(event);
      if (page.length === pageSize) {
        cursor = page[page.length - 1]!.id;
      } else if (this.overflowed) {
        this.overflowed = false;
        cursor = this.lastId ?? cursor;
      } else {
        break;
      }
    }
    const held = this.held ?? [];
    this.held = undefined;
    for (const event of held) this.emit(event);
  }

  private emit(event: StoredEvent): void {
    if (this.lastId !== undefined && compareEventIds(event.id, this.lastId) <= 0) return;
    this.lastId = event.id;
    this.deliver(event);
  }
}
