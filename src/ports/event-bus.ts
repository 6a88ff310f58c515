import type { RunEvent, StoredEvent } from '../domain/types.js';

export type EventListener = (event: StoredEvent) => void;

/**
 * Run events: published by workers, delivered to SSE clients on every replica.
 * Each tenant retains its newest `SERVICE_EVENTS_RETAIN` events for replay; ids increase
 * within a tenant and compare with {@link compareEventIds}.
 */
export interface EventBus {
  /** Appends the event to the tenant's retained log, announces it, and returns its id. */
  publish(tenant: string, event: RunEvent): Promise<string>;
  /** Retained events of the tenant strictly after `afterId`, oldest first, at most `count`. */
  readAfter(tenant: string, afterId: string, count: number): Promise<StoredEvent[]>;
  /** Live events of one tenant from now on. Returns the function that unsubscribes. */
  subscribe(tenant: string, listener: EventListener): () => void;
  /** Number of live listeners in this process (leak checks). */
  listenerCount(): number;
  close(): Promise<void>;
}

/** Event ids are Redis stream ids `<ms>-<seq>`; both adapters use that form. */
export function compareEventIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am !== bm ? am - bm : as - bs;
}
