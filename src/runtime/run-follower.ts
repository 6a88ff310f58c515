import type { RunEventType, StoredEvent } from '../domain/types.js';
import type { EventBus } from '../ports/event-bus.js';

/** Events after which a run does nothing until someone acts: it ended, or it waits for an answer. */
export const STOP_EVENTS: ReadonlySet<RunEventType> = new Set(['completed', 'failed', 'cancelled', 'interrupted']);

/** Events of the tenant kept while the run to follow is not known yet (its creation is under way). */
const EARLY_LIMIT = 10_000;

/**
 * Follows one run's events, live, from before the run exists: subscribe (and await
 * `events.ready`) first, start or resume the run, then {@link follow} its id. Events of the
 * tenant published in between are held and those of the run replayed, so nothing is missed,
 * whichever worker executes it and whichever replica holds the follower. No polling: only the
 * bus subscription this process already holds.
 */
export class RunFollower {
  private runId: string | undefined;
  private isStale: (event: StoredEvent) => boolean = () => false;
  private early: StoredEvent[] = [];
  private readonly unsubscribe: () => void;
  private stopped: ((event: StoredEvent) => void) | undefined;
  private stop: StoredEvent | undefined;

  constructor(
    events: EventBus,
    tenant: string,
    /** Each event of the followed run, in order. */
    private readonly onEvent: (event: StoredEvent) => void = () => {},
  ) {
    this.unsubscribe = events.subscribe(tenant, (event) => {
      if (this.runId === undefined) {
        if (this.early.length < EARLY_LIMIT) this.early.push(event);
      } else if (event.event.run_id === this.runId) this.deliver(event);
    });
  }

  /**
   * Starts following `runId`: its events held so far first, then live ones. `isStale` names a
   * stop event that happened before what the caller waits for (the `interrupted` of the very
   * approval being answered, published after the run was marked interrupted and so possibly
   * delivered after the answer): it is passed on but does not count as the next stop.
   */
  follow(runId: string, isStale?: (event: StoredEvent) => boolean): void {
    this.runId = runId;
    if (isStale) this.isStale = isStale;
    const held = this.early;
    this.early = [];
    for (const event of held) if (event.event.run_id === runId) this.deliver(event);
  }

  /** Resolves with the run's next stop event (see {@link STOP_EVENTS}). */
  nextStop(): Promise<StoredEvent> {
    if (this.stop) return Promise.resolve(this.stop);
    return new Promise((resolve) => {
      this.stopped = resolve;
    });
  }

  close(): void {
    this.unsubscribe();
    this.early = [];
  }

  private deliver(event: StoredEvent): void {
    this.onEvent(event);
    if (!this.stop && STOP_EVENTS.has(event.event.type) && !this.isStale(event)) {
      this.stop = event;
      this.stopped?.(event);
    }
  }
}
