import type { RunEvent, StoredEvent } from '../domain/types.js';

export type EventListener = (event: StoredEvent) => void;

/** A run's cancellation, announced to every process. */
export interface CancelSignal {
  tenant: string;
  run_id: string;
  /** The run's error: `cancelled`, `timeout`, … */
  reason: string;
}

/**
 * Run events: published by workers, delivered to SSE clients on every replica.
 * Each tenant retains its newest `SERVICE_EVENTS_RETAIN` events for replay, at most
 * `SERVICE_EVENTS_MAX_BYTES` of their JSON (UTF-8) and `SERVICE_EVENTS_RUN_MAX_BYTES` of one
 * run's (past that the run's own oldest go, out of the middle of the log); ids have the form
 * `<ms>-<seq>` and rise within a tenant (domain/event-ids.ts).
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
   * Tells every process that a run was cancelled, so the one executing it aborts its node.
   * Best effort (a process disconnected at that moment misses it): the run's checkpoint writes
   * are conditional on it still running, so a missed signal costs at most the rest of a node.
   */
  signalCancel(signal: CancelSignal): Promise<void>;
  /** Hears every {@link signalCancel} from now on. Returns the function that stops listening. */
  onCancel(listener: (signal: CancelSignal) => void): () => void;
  /**
   * Resolves once live delivery is established in this process, so that an event published
   * after it resolves reaches the listeners subscribed before. Rejects after `timeoutMs`.
   */
  ready(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}
