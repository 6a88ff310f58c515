import { EventEmitter } from 'node:events';
import type { RunEvent, StoredEvent } from '../../domain/types.js';
import { compareEventIds, type EventBus, type EventListener } from '../../ports/event-bus.js';

/**
 * The EventBus in process memory: a ring buffer of the newest `retain` events per tenant and
 * an EventEmitter for live delivery. Ids have the Redis stream form `<ms>-<seq>`.
 */
export class MemoryEventBus implements EventBus {
  private readonly logs = new Map<string, StoredEvent[]>();
  private readonly emitter = new EventEmitter();
  private lastMs = 0;
  private seq = 0;

  constructor(private readonly retain: number) {
    this.emitter.setMaxListeners(0);
  }

  async publish(tenant: string, event: RunEvent): Promise<string> {
    const ms = Math.max(Date.now(), this.lastMs);
    this.seq = ms === this.lastMs ? this.seq + 1 : 0;
    this.lastMs = ms;
    const stored: StoredEvent = { id: `${ms}-${this.seq}`, tenant, event: structuredClone(event) };
    let log = this.logs.get(tenant);
    if (!log) this.logs.set(tenant, (log = []));
    log.push(stored);
    if (log.length > this.retain) log.splice(0, log.length - this.retain);
    this.emitter.emit(tenant, stored);
    return stored.id;
  }

  async readAfter(tenant: string, afterId: string, count: number): Promise<StoredEvent[]> {
    const log = this.logs.get(tenant) ?? [];
    return log.filter((e) => compareEventIds(e.id, afterId) > 0).slice(0, count);
  }

  subscribe(tenant: string, listener: EventListener): () => void {
    this.emitter.on(tenant, listener);
    return () => this.emitter.off(tenant, listener);
  }

  listenerCount(): number {
    return this.emitter.eventNames().reduce((sum, name) => sum + this.emitter.listenerCount(name), 0);
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}
