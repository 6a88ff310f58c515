import type { RunEvent, StoredEvent } from '../../domain/types.js';
import { compareEventIds } from '../../domain/event-ids.js';
import type { CancelSignal, EventBus, EventListener } from '../../ports/event-bus.js';

/** The newest `capacity` events of one tenant, oldest first, in a fixed array. */
class EventRing {
  private readonly slots: StoredEvent[] = [];
  /** Index of the oldest event once the ring is full. */
  private start = 0;

  constructor(private readonly capacity: number) {}

  push(event: StoredEvent): void {
    if (this.slots.length < this.capacity) {
      this.slots.push(event);
      return;
    }
    this.slots[this.start] = event;
    this.start = (this.start + 1) % this.capacity;
  }

  /** Events strictly after `afterId`, oldest first, at most `count`. */
  after(afterId: string, count: number): StoredEvent[] {
    const size = this.slots.length;
    const at = (i: number) => this.slots[(this.start + i) % size]!;
    // Ids rise with the logical index: binary search for the first one after `afterId`.
    let low = 0;
    let high = size;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compareEventIds(at(mid).id, afterId) > 0) high = mid;
      else low = mid + 1;
    }
    const out: StoredEvent[] = [];
    for (let i = low; i < size && out.length < count; i += 1) out.push(at(i));
    return out;
  }
}

/**
 * The EventBus in process memory: a ring buffer of the newest `retain` events per tenant and
 * a Map of listener sets per tenant for live delivery (never an EventEmitter: a tenant named
 * `error` or `newListener` would be one of its special events). Ids have the Redis stream form `<ms>-<seq>` and rise
 * strictly, as XADD's do. Delivery is synchronous, so it is never lost nor reordered.
 */
export class MemoryEventBus implements EventBus {
  private readonly logs = new Map<string, EventRing>();
  private readonly listeners = new Map<string, Set<EventListener>>();
  private readonly cancelListeners = new Set<(signal: CancelSignal) => void>();
  private lastMs = 0;
  private seq = 0;

  /** @param retain events kept per tenant for replay (SERVICE_EVENTS_RETAIN) */
  constructor(private readonly retain: number) {
    if (!Number.isInteger(retain) || retain < 1) throw new RangeError(`retain must be a positive integer, got ${retain}`);
  }

  async publish(tenant: string, event: RunEvent): Promise<string> {
    const ms = Math.max(Date.now(), this.lastMs);
    this.seq = ms === this.lastMs ? this.seq + 1 : 0;
    this.lastMs = ms;
    const stored: StoredEvent = { id: `${ms}-${this.seq}`, tenant, event: structuredClone(event) };
    let log = this.logs.get(tenant);
    if (!log) this.logs.set(tenant, (log = new EventRing(this.retain)));
    log.push(stored);
    for (const listener of [...(this.listeners.get(tenant) ?? [])]) listener(stored);
    return stored.id;
  }

  async readAfter(tenant: string, afterId: string, count: number): Promise<StoredEvent[]> {
    return this.logs.get(tenant)?.after(afterId, count) ?? [];
  }

  subscribe(tenant: string, listener: EventListener): () => void {
    let set = this.listeners.get(tenant);
    if (!set) this.listeners.set(tenant, (set = new Set()));
    // A wrapper per subscription, so subscribing one function twice needs two unsubscribes.
    const entry: EventListener = (event) => listener(event);
    set.add(entry);
    return () => {
      set.delete(entry);
      if (set.size === 0 && this.listeners.get(tenant) === set) this.listeners.delete(tenant);
    };
  }

  async signalCancel(signal: CancelSignal): Promise<void> {
    for (const listener of [...this.cancelListeners]) listener({ ...signal });
  }

  onCancel(listener: (signal: CancelSignal) => void): () => void {
    const entry = (signal: CancelSignal) => listener(signal);
    this.cancelListeners.add(entry);
    return () => this.cancelListeners.delete(entry);
  }

  async ready(): Promise<void> {}

  listenerCount(): number {
    let count = 0;
    for (const set of this.listeners.values()) count += set.size;
    return count;
  }

  async close(): Promise<void> {
    this.listeners.clear();
    this.cancelListeners.clear();
  }
}
