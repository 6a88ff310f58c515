import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import type { RunEvent, StoredEvent } from '../../domain/types.js';
import type { EventBus, EventListener } from '../../ports/event-bus.js';
import { RedisKeys } from './keys.js';

export interface RedisEventBusOptions {
  /** Connection for XADD, XRANGE and PUBLISH. */
  redis: Redis;
  /** A dedicated connection for SUBSCRIBE (it can do nothing else); one per process. */
  subscriber: Redis;
  keyPrefix: string;
  /** Events retained per tenant (XADD MAXLEN ~). */
  retain: number;
}

/**
 * The EventBus on Redis: each event is appended to its tenant's capped stream (the stream id
 * is the event id) and announced on one pub/sub channel; each process holds one subscriber
 * connection and fans announcements out to its local listeners by tenant.
 */
export class RedisEventBus implements EventBus {
  private readonly keys: RedisKeys;
  private readonly emitter = new EventEmitter();
  private subscribed: Promise<unknown> | undefined;

  constructor(private readonly options: RedisEventBusOptions) {
    this.keys = new RedisKeys(options.keyPrefix);
    this.emitter.setMaxListeners(0);
    options.subscriber.on('message', (channel: string, message: string) => {
      if (channel !== this.keys.eventsChannel()) return;
      const stored = JSON.parse(message) as StoredEvent;
      this.emitter.emit(stored.tenant, stored);
    });
  }

  async publish(tenant: string, event: RunEvent): Promise<string> {
    const { redis, retain } = this.options;
    const data = JSON.stringify(event);
    const id = await redis.xadd(this.keys.events(tenant), 'MAXLEN', '~', String(retain), '*', 'e', data);
    if (id === null) throw new Error('XADD returned no id');
    await redis.publish(this.keys.eventsChannel(), JSON.stringify({ id, tenant, event } satisfies StoredEvent));
    return id;
  }

  async readAfter(tenant: string, afterId: string, count: number): Promise<StoredEvent[]> {
    const entries = await this.options.redis.xrange(this.keys.events(tenant), `(${afterId}`, '+', 'COUNT', count);
    return entries.map(([id, fields]) => ({ id, tenant, event: JSON.parse(fields[1] ?? '{}') as RunEvent }));
  }

  subscribe(tenant: string, listener: EventListener): () => void {
    this.subscribed ??= this.options.subscriber.subscribe(this.keys.eventsChannel()).catch((error: unknown) => {
      this.subscribed = undefined;
      throw error;
    });
    this.emitter.on(tenant, listener);
    return () => this.emitter.off(tenant, listener);
  }

  /** Resolves once the subscriber connection listens on the channel. */
  async ready(): Promise<void> {
    await (this.subscribed ??= this.options.subscriber.subscribe(this.keys.eventsChannel()));
  }

  listenerCount(): number {
    return this.emitter.eventNames().reduce((sum, name) => sum + this.emitter.listenerCount(name), 0);
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}
