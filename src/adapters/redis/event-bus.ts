import type { Redis } from 'ioredis';
import { AppError } from '../../domain/errors.js';
import type { RunEvent, StoredEvent } from '../../domain/types.js';
import { EventSeam } from '../../domain/event-seam.js';
import type { CancelSignal, EventBus, EventListener } from '../../ports/event-bus.js';
import { RedisKeys } from './keys.js';
import { loadScripts, type ScriptCaller } from './scripts.js';

export interface RedisEventBusOptions {
  /** Connection for the publish script, XRANGE and XREVRANGE. */
  redis: Redis;
  /** A dedicated connection for SUBSCRIBE (it can do nothing else); one per process. */
  subscriber: Redis;
  keyPrefix: string;
  /** Events retained per tenant (XADD MAXLEN ~). */
  retain: number;
  /** Errors of background work (a catch-up read that failed is retried). @defaultValue ignore */
  onError?: (error: unknown) => void;
  /** Pause before a failed catch-up is tried again. @defaultValue 500 */
  retryMs?: number;
}

/** The live listeners of one tenant in this process, behind one seam. */
interface TenantFeed {
  listeners: Set<EventListener>;
  seam: EventSeam;
  /** Where a catch-up starts when nothing was delivered yet: the stream's last id when the feed opened. */
  baseline: Promise<string>;
}

const PAGE = 500;

/**
 * The EventBus on Redis: each event is appended to its tenant's capped stream (the stream id
 * is the event id) and announced on one pub/sub channel by one script. Each process holds one
 * subscriber connection and fans announcements out to its local listeners by tenant.
 *
 * Pub/sub drops what is published while the subscriber is disconnected. When it closes,
 * every tenant feed starts holding live events; once ioredis has reconnected and the channel
 * is subscribed again, each feed reads its stream after the last event it delivered, delivers
 * that, then the held events. Listeners therefore see every event, in order, without
 * duplicates, across a Redis restart, and SSE clients need not reconnect.
 */
export class RedisEventBus implements EventBus {
  private readonly keys: RedisKeys;
  private readonly script: ScriptCaller;
  private readonly channel: string;
  private readonly feeds = new Map<string, TenantFeed>();
  private readonly cancelChannel: string;
  private readonly cancelListeners = new Set<(signal: CancelSignal) => void>();
  private cancelSubscription: Promise<void> | undefined;
  private readonly waiters = new Set<(error?: Error) => void>();
  private readonly detach: () => void;
  private readonly onError: (error: unknown) => void;
  private subscription: Promise<void> | undefined;
  /** Subscribed and not disconnected since. */
  private live = false;
  /** Counts disconnects, so a catch-up that raced one holds again. */
  private epoch = 0;
  private resyncing = false;
  private resyncAgain = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: RedisEventBusOptions) {
    this.keys = new RedisKeys(options.keyPrefix);
    this.channel = this.keys.eventsChannel();
    this.cancelChannel = this.keys.cancelChannel();
    this.onError = options.onError ?? (() => {});
    this.script = loadScripts(options.redis);
    const { subscriber } = options;
    const onMessage = (channel: string, message: string) => this.onMessage(channel, message);
    const onClose = () => this.onDisconnect();
    const onReady = () => {
      if (this.subscription && !this.closed) void this.resubscribe();
    };
    subscriber.on('message', onMessage);
    subscriber.on('close', onClose);
    subscriber.on('ready', onReady);
    this.detach = () => {
      subscriber.off('message', onMessage);
      subscriber.off('close', onClose);
      subscriber.off('ready', onReady);
    };
  }

  publish(tenant: string, event: RunEvent): Promise<string> {
    return this.script<string>(
      'publishEvent',
      [this.keys.events(tenant)],
      [String(this.options.retain), JSON.stringify(event), this.channel, JSON.stringify(tenant)],
    );
  }

  async readAfter(tenant: string, afterId: string, count: number): Promise<StoredEvent[]> {
    const entries = await this.options.redis.xrange(this.keys.events(tenant), `(${afterId}`, '+', 'COUNT', count);
    return entries.map(([id, fields]) => ({ id, tenant, event: JSON.parse(fields[1] ?? '{}') as RunEvent }));
  }

  subscribe(tenant: string, listener: EventListener): () => void {
    const feed = this.feeds.get(tenant) ?? this.openFeed(tenant);
    feed.listeners.add(listener);
    this.ensureSubscribed();
    return () => {
      feed.listeners.delete(listener);
      if (feed.listeners.size === 0 && this.feeds.get(tenant) === feed) this.feeds.delete(tenant);
    };
  }

  async signalCancel(signal: CancelSignal): Promise<void> {
    await this.options.redis.publish(this.cancelChannel, JSON.stringify(signal));
  }

  onCancel(listener: (signal: CancelSignal) => void): () => void {
    const entry = (signal: CancelSignal) => listener(signal);
    this.cancelListeners.add(entry);
    // Its own channel, subscribed only by processes that execute runs (ioredis resubscribes after a reconnect).
    this.cancelSubscription ??= this.options.subscriber.subscribe(this.cancelChannel).then(
      () => undefined,
      (error: unknown) => {
        this.cancelSubscription = undefined;
        this.onError(error);
      },
    );
    return () => this.cancelListeners.delete(entry);
  }

  async ready(timeoutMs: number): Promise<void> {
    this.ensureSubscribed();
    if (this.live) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => done(new AppError('unavailable', 'The event subscription is not established.')), timeoutMs);
      const done = (error?: Error) => {
        clearTimeout(timer);
        this.waiters.delete(done);
        if (error) reject(error);
        else resolve();
      };
      this.waiters.add(done);
    });
  }

  listenerCount(): number {
    let count = 0;
    for (const feed of this.feeds.values()) count += feed.listeners.size;
    return count;
  }

  /** Detaches from the subscriber connection (whose owner quits it) and drops every listener. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.detach();
    clearTimeout(this.retryTimer);
    this.feeds.clear();
    this.cancelListeners.clear();
    for (const done of [...this.waiters]) done(new AppError('unavailable', 'The event bus is closed.'));
  }

  private openFeed(tenant: string): TenantFeed {
    const listeners = new Set<EventListener>();
    const feed: TenantFeed = {
      listeners,
      seam: new EventSeam((event) => {
        for (const listener of listeners) listener(event);
      }),
      baseline: this.streamTail(tenant),
    };
    // Opened while disconnected: what it may miss is recovered at the next catch-up.
    if (this.subscription && !this.live) feed.seam.hold();
    this.feeds.set(tenant, feed);
    return feed;
  }

  /**
   * The id of the tenant's newest retained event ('0-0' when none). If Redis cannot answer,
   * the local clock stands in (stream ids are Redis milliseconds): good enough for the one
   * case it serves, a feed opened during an outage.
   */
  private async streamTail(tenant: string): Promise<string> {
    const fallback = `${Date.now()}-0`;
    try {
      const [newest] = await this.options.redis.xrevrange(this.keys.events(tenant), '+', '-', 'COUNT', 1);
      return newest?.[0] ?? '0-0';
    } catch {
      return fallback;
    }
  }

  private ensureSubscribed(): void {
    this.subscription ??= this.options.subscriber.subscribe(this.channel).then(
      () => this.onSubscribed(),
      (error: unknown) => {
        this.subscription = undefined;
        this.onError(error);
      },
    );
  }

  private onMessage(channel: string, message: string): void {
    if (channel === this.cancelChannel) {
      try {
        const signal = JSON.parse(message) as CancelSignal;
        for (const listener of [...this.cancelListeners]) listener(signal);
      } catch (error) {
        this.onError(new Error('A cancel signal is not JSON.', { cause: error }));
      }
      return;
    }
    if (channel !== this.channel) return;
    let stored: StoredEvent;
    try {
      stored = JSON.parse(message) as StoredEvent;
    } catch (error) {
      this.onError(new Error('An event announcement is not JSON.', { cause: error }));
      return;
    }
    this.feeds.get(stored.tenant)?.seam.push(stored);
  }

  private onDisconnect(): void {
    if (!this.subscription || this.closed) return;
    this.live = false;
    this.epoch += 1;
    for (const feed of this.feeds.values()) feed.seam.hold();
  }

  /** After a reconnect: make sure the channel is subscribed (ioredis also does), then catch up. */
  private async resubscribe(): Promise<void> {
    try {
      await this.options.subscriber.subscribe(this.channel);
    } catch (error) {
      this.onError(error);
      return;
    }
    this.onSubscribed();
  }

  private onSubscribed(): void {
    if (this.closed || this.options.subscriber.status !== 'ready') return;
    this.live = true;
    for (const done of [...this.waiters]) done();
    void this.resync();
  }

  /** Catches up every holding feed; a failed read is retried after `retryMs`. */
  private async resync(): Promise<void> {
    if (this.resyncing) {
      this.resyncAgain = true;
      return;
    }
    this.resyncing = true;
    try {
      do {
        this.resyncAgain = false;
        for (const [tenant, feed] of this.feeds) {
          if (!feed.seam.holding) continue;
          const epoch = this.epoch;
          try {
            const from = feed.seam.lastId ?? (await feed.baseline);
            await feed.seam.catchUp((afterId, count) => this.readAfter(tenant, afterId, count), from, PAGE);
          } catch (error) {
            this.onError(error);
            this.retryLater();
            continue;
          }
          // Disconnected again meanwhile: keep holding until the next catch-up.
          if (this.epoch !== epoch || !this.live) feed.seam.hold();
        }
      } while (this.resyncAgain && !this.closed);
    } finally {
      this.resyncing = false;
    }
  }

  private retryLater(): void {
    if (this.retryTimer || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.live) void this.resync();
    }, this.options.retryMs ?? 500);
    this.retryTimer.unref();
  }
}
