import type { StoredEvent } from './types.js';
import { compareEventIds } from './event-ids.js';

/** Reads retained events after an id, oldest first, at most `count` (an EventBus's `readAfter`). */
export type ReadAfter = (afterId: string, count: number) => Promise<StoredEvent[]>;

/**
 * The seam between a replay and live delivery, for one tenant: live events are held while
 * {@link EventSeam.catchUp} reads the retained log after an id, then released; every event
 * reaches `deliver` once, in id order (ids at or below the last delivered one are skipped).
 * Used by each SSE stream that resumes after `Last-Event-ID`, and by an event bus adapter that
 * must recover announcements lost while disconnected.
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
   * so the caller may retry. `pace`, when given, is awaited before each retained event: a
   * consumer that writes to a client waits there for it to take what was written, so a page
   * of large events is not all buffered at once.
   */
  async catchUp(read: ReadAfter, fromId: string, pageSize = 500, pace?: () => Promise<void>): Promise<void> {
    this.hold();
    let cursor = this.lastId && compareEventIds(this.lastId, fromId) > 0 ? this.lastId : fromId;
    for (;;) {
      const page = await read(cursor, pageSize);
      for (const event of page) {
        if (pace) await pace();
        this.emit(event);
      }
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
