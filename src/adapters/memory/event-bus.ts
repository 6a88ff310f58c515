import { DEFAULT_EVENT_RETENTION, eventCountSlack, type RunEvent, type StoredEvent } from '../../domain/types.js';
import { compareEventIds } from '../../domain/event-ids.js';
import type { CancelSignal, EventBus, EventListener } from '../../ports/event-bus.js';

/** A retained event with what its caps count: its run and the UTF-8 bytes of its JSON. */
interface Entry {
  id: string;
  run: string;
  bytes: number;
  /** Undefined once dropped (a run's oldest, from the middle of the log). */
  stored: StoredEvent | undefined;
}

/** The events one run has retained in a tenant's log, oldest first. */
interface RunEntries {
  entries: Entry[];
  /** Index of the oldest still retained. */
  head: number;
  bytes: number;
}

/**
 * The retained events of one tenant, oldest first: the newest `retain` events (up to
 * `eventCountSlack(retain)` more between trims), at most `maxBytes` bytes of event JSON (UTF-8,
 * as Redis counts them) and `runMaxBytes` per run; past a cap the oldest go (the run's own
 * oldest for the run cap, out of the middle of the log). Dropped entries
 * stay as gaps, skipped by reads, until compaction; ids rise with the index, so a read after
 * an id is a binary search.
 */
class EventLog {
  private entries: Entry[] = [];
  /** Index of the oldest entry not yet passed over. */
  private head = 0;
  private count = 0;
  private bytes = 0;
  private readonly runs = new Map<string, RunEntries>();

  constructor(private readonly caps: EventCaps) {}

  push(stored: StoredEvent): void {
    const entry: Entry = { id: stored.id, run: stored.event.run_id ?? '', bytes: Buffer.byteLength(JSON.stringify(stored.event)), stored };
    this.entries.push(entry);
    this.count += 1;
    this.bytes += entry.bytes;
    let run = this.runs.get(entry.run);
    if (!run) this.runs.set(entry.run, (run = { entries: [], head: 0, bytes: 0 }));
    run.entries.push(entry);
    run.bytes += entry.bytes;
    while (run.bytes > this.caps.runMaxBytes && run.head < run.entries.length) this.drop(run.entries[run.head]!);
    // Past the count cap in batches (eventCountSlack), past the byte cap at once; back to both.
    if (this.count > this.caps.retain + eventCountSlack(this.caps.retain) || this.bytes > this.caps.maxBytes) {
      while ((this.count > this.caps.retain || this.bytes > this.caps.maxBytes) && this.head < this.entries.length) {
        const oldest = this.entries[this.head]!;
        if (oldest.stored) this.drop(oldest);
        else this.head += 1;
      }
    }
    this.compact();
  }

  /** Events strictly after `afterId`, oldest first, at most `count`. */
  after(afterId: string, count: number): StoredEvent[] {
    let low = this.head;
    let high = this.entries.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compareEventIds(this.entries[mid]!.id, afterId) > 0) high = mid;
      else low = mid + 1;
    }
    const out: StoredEvent[] = [];
    for (let i = low; i < this.entries.length && out.length < count; i += 1) {
      const { stored } = this.entries[i]!;
      if (stored) out.push(stored);
    }
    return out;
  }

  private drop(entry: Entry): void {
    entry.stored = undefined;
    this.count -= 1;
    this.bytes -= entry.bytes;
    const run = this.runs.get(entry.run)!;
    // A run's entries leave in order: by its cap from its head, by the tenant's as the log's oldest.
    run.head += 1;
    run.bytes -= entry.bytes;
    if (run.head === run.entries.length) this.runs.delete(entry.run);
    else if (run.head > 64 && run.head * 2 > run.entries.length) {
      run.entries = run.entries.slice(run.head);
      run.head = 0;
    }
  }

  /** Drops the passed-over head and, once gaps outnumber the events, the gaps: memory stays in proportion to what is retained. */
  private compact(): void {
    while (this.head < this.entries.length && !this.entries[this.head]!.stored) this.head += 1;
    const held = this.entries.length - this.head;
    if ((this.head > 64 && this.head * 2 > this.entries.length) || (held > 64 && held > this.count * 2)) {
      this.entries = this.entries.slice(this.head).filter((entry) => entry.stored);
      this.head = 0;
    }
  }
}

/** The caps of each tenant's log. */
interface EventCaps {
  retain: number;
  maxBytes: number;
  runMaxBytes: number;
}

/**
 * The EventBus in process memory: a log of the newest events per tenant, within the count and
 * byte caps (EventLog), and
 * a Map of listener sets per tenant for live delivery (never an EventEmitter: a tenant named
 * `error` or `newListener` would be one of its special events). Ids have the Redis stream form `<ms>-<seq>` and rise
 * strictly, as XADD's do. Delivery is synchronous, so it is never lost nor reordered.
 */
export class MemoryEventBus implements EventBus {
  private readonly logs = new Map<string, EventLog>();
  private readonly caps: EventCaps;
  private readonly listeners = new Map<string, Set<EventListener>>();
  private readonly cancelListeners = new Set<(signal: CancelSignal) => void>();
  private lastMs = 0;
  private seq = 0;

  /**
   * @param retain events kept per tenant for replay (SERVICE_EVENTS_RETAIN)
   * @param bytes bytes of event JSON kept per tenant and per run (SERVICE_EVENTS_MAX_BYTES,
   *   SERVICE_EVENTS_RUN_MAX_BYTES) @defaultValue DEFAULT_EVENT_RETENTION
   */
  constructor(retain: number, bytes: { maxBytes?: number; runMaxBytes?: number } = {}) {
    const caps = { retain, maxBytes: bytes.maxBytes ?? DEFAULT_EVENT_RETENTION.bytes, runMaxBytes: bytes.runMaxBytes ?? DEFAULT_EVENT_RETENTION.runBytes };
    for (const [name, value] of Object.entries(caps)) {
      if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
    }
    this.caps = caps;
  }

  async publish(tenant: string, event: RunEvent): Promise<string> {
    const ms = Math.max(Date.now(), this.lastMs);
    this.seq = ms === this.lastMs ? this.seq + 1 : 0;
    this.lastMs = ms;
    const stored: StoredEvent = { id: `${ms}-${this.seq}`, tenant, event: structuredClone(event) };
    let log = this.logs.get(tenant);
    if (!log) this.logs.set(tenant, (log = new EventLog(this.caps)));
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
