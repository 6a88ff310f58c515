import { runGone, type AppError } from '../domain/errors.js';
import type { RunEventType, StoredEvent } from '../domain/types.js';
import type { EventBus } from '../ports/event-bus.js';
import type { RunWatch } from './run-watch.js';

/** Events after which a run does nothing until someone acts: it ended, or it waits for an answer. */
export const STOP_EVENTS: ReadonlySet<RunEventType> = new Set(['completed', 'failed', 'cancelled', 'interrupted']);

/** Events of the tenant kept while the run to follow is not known yet (its creation is under way). */
const EARLY_LIMIT = 10_000;

export interface RunFollowerOptions {
  /** Each event of the followed run, in order. */
  onEvent?: (event: StoredEvent) => void;
  /** Checks that the followed run still exists; without it a run that vanished is never noticed. */
  watch?: RunWatch;
  /** Called once if the followed run vanished before it stopped (its session was removed). */
  onGone?: () => void;
}

/**
 * Follows one run's events, live, from before the run exists: subscribe (and await
 * `events.ready`) first, start or resume the run, then {@link follow} its id. Events of the
 * tenant published in between are held and those of the run replayed, so nothing is missed,
 * whichever worker executes it and whichever replica holds the follower. No polling for
 * events: only the bus subscription this process already holds. A run removed with its session
 * publishes nothing more: the watch, if given, notices it and the follower ends with `gone`.
 */
/** The defaults of a follower's functions, shared: no closure made per follower. */
const NEVER_STALE = (): boolean => false;
const NOTHING = (): void => {};

export class RunFollower {
  private runId: string | undefined;
  private isStale: (event: StoredEvent) => boolean = NEVER_STALE;
  private early: StoredEvent[] = [];
  private readonly unsubscribe: () => void;
  private stopped: { resolve: (event: StoredEvent) => void; reject: (error: AppError) => void } | undefined;
  private stop: StoredEvent | undefined;
  private gone: AppError | undefined;
  private unwatch: () => void = NOTHING;

  constructor(
    events: EventBus,
    private readonly tenant: string,
    private readonly options: RunFollowerOptions = {},
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
    if (!this.stop && this.options.watch) this.unwatch = this.options.watch.watch(this.tenant, runId, () => this.vanish(runId));
  }

  /**
   * Resolves with the run's next stop event (see {@link STOP_EVENTS}); rejects with `gone`
   * when the run vanished first.
   */
  nextStop(): Promise<StoredEvent> {
    if (this.stop) return Promise.resolve(this.stop);
    if (this.gone) return Promise.reject(this.gone);
    return new Promise((resolve, reject) => {
      this.stopped = { resolve, reject };
    });
  }

  close(): void {
    this.unsubscribe();
    this.unwatch();
    this.early = [];
  }

  private deliver(event: StoredEvent): void {
    if (this.gone) return;
    this.options.onEvent?.(event);
    if (!this.stop && STOP_EVENTS.has(event.event.type) && !this.isStale(event)) {
      this.stop = event;
      // Once stopped, whatever becomes of the run is not this follower's answer.
      this.unwatch();
      this.stopped?.resolve(event);
    }
  }

  private vanish(runId: string): void {
    if (this.stop || this.gone) return;
    this.gone = runGone(runId);
    this.stopped?.reject(this.gone);
    this.options.onGone?.();
  }
}
