import { AppError } from '../../domain/errors.js';
import { DEFAULT_EVENT_RETENTION, type RunEvent, type StoredEvent } from '../../domain/types.js';
import { EventSeam } from '../../domain/event-seam.js';
import { withTimeout } from '../../domain/timeout.js';
import type { CancelSignal, EventBus, EventListener } from '../../ports/event-bus.js';
import { announcementsOf, type Announcements } from './announcements.js';
import type { RedisClient } from './connection.js';
import { redisContext, type RedisContext } from './context.js';
import { toRun } from './run-store.js';

export interface RedisEventBusOptions {
  /** Connection for the publish script, XRANGE and XREVRANGE. */
  redis: RedisClient;
  /**
   * A dedicated connection for SUBSCRIBE (it can do nothing else); one per process. On a Redis
   * Cluster, a Cluster client with sharded subscribers (events use SSUBSCRIBE per tenant).
   */
  subscriber: RedisClient;
  keyPrefix: string;
  /** Events retained per tenant. */
  retain: number;
  /** Bytes of event JSON (UTF-8) retained per tenant. @defaultValue DEFAULT_EVENT_RETENTION.bytes */
  maxBytes?: number;
  /** Bytes of event JSON (UTF-8) retained per run. @defaultValue DEFAULT_EVENT_RETENTION.runBytes */
  runMaxBytes?: number;
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
  /** Set while the feed has no listener: it is dropped when this fires. */
  linger?: NodeJS.Timeout;
}

/**
 * How long a tenant's feed outlives its last listener: a client that waits for one run after
 * another (POST /api/runs/wait in a loop) reuses it instead of opening a feed, with its stream
 * read, per request.
 */
const FEED_LINGER_MS = 10_000;

const PAGE = 500;

/** Longest wait for the server to confirm the subscriptions of one pass before it is retried. */
const SUBSCRIBE_TIMEOUT_MS = 5_000;

/**
 * The EventBus on Redis: each event is appended to its tenant's stream (the stream id is the
 * event id), capped in events and in bytes per tenant and per run (includes/publishEvent.lua),
 * and announced by the same script: on one pub/sub channel (one Redis,
 * Sentinel), or on a Redis Cluster on the tenant's sharded channel, in its slot, so an
 * announcement travels to one shard only. Each process holds one subscriber client and fans
 * announcements out to its local listeners by tenant.
 *
 * Pub/sub drops what is published while a subscription is down. When it is lost (the
 * connection closed, a failover reset the cluster's subscribers), every tenant feed starts
 * holding live events; once the subscriptions are confirmed again, each feed reads its stream
 * after the last event it delivered, delivers that, then the held events. Listeners therefore
 * see every event, in order, without duplicates, across a Redis restart or a failover, and
 * SSE clients need not reconnect. On a cluster a new tenant feed is held the same way until
 * its channel is subscribed, then caught up from the stream's end as it was when it opened.
 */
export class RedisEventBus implements EventBus {
  private readonly c: RedisContext;
  private readonly source: Announcements;
  private readonly feeds = new Map<string, TenantFeed>();
  private readonly cancelListeners = new Set<(signal: CancelSignal) => void>();
  private cancelSubscription: Promise<void> | undefined;
  private readonly waiters = new Set<(error?: Error) => void>();
  private readonly onError: (error: unknown) => void;
  /** A subscription was asked for (by a listener or `ready`). */
  private started = false;
  /** Subscribed and not lost since. */
  private live = false;
  /** Tenants whose sharded channel is not confirmed subscribed since their feed opened or the last loss. */
  private readonly pending = new Set<string>();
  /** Counts losses, so a catch-up that raced one holds again. */
  private epoch = 0;
  private syncing = false;
  private syncAgain = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: RedisEventBusOptions) {
    this.c = redisContext(options.redis, options.keyPrefix);
    this.onError = options.onError ?? (() => {});
    this.source = announcementsOf(options.subscriber, this.c.keys, {
      announcement: (message) => this.onAnnouncement(message),
      cancel: (message) => this.onCancelMessage(message),
      lost: () => this.onLost(),
      regained: () => {
        if (this.started && !this.closed) void this.sync();
      },
    });
  }

  publish(tenant: string, event: RunEvent): Promise<string> {
    const { keys } = this.c;
    return this.c.script<string>(
      'publishEvent',
      [keys.events(tenant), keys.eventBytes(tenant), keys.eventsByRun(tenant)],
      [
        String(this.options.retain),
        JSON.stringify(event),
        this.c.announceChannel(tenant),
        JSON.stringify(tenant),
        this.options.maxBytes ?? DEFAULT_EVENT_RETENTION.bytes,
        this.options.runMaxBytes ?? DEFAULT_EVENT_RETENTION.runBytes,
        event.run_id ?? '',
      ],
    );
  }

  async readAfter(tenant: string, afterId: string, count: number): Promise<StoredEvent[]> {
    const entries = await this.options.redis.xrange(this.c.keys.events(tenant), `(${afterId}`, '+', 'COUNT', count);
    return entries.map(([id, fields]) => ({ id, tenant, event: JSON.parse(fields[1] ?? '{}') as RunEvent }));
  }

  subscribe(tenant: string, listener: EventListener): () => void {
    const feed = this.feeds.get(tenant) ?? this.openFeed(tenant);
    clearTimeout(feed.linger);
    feed.linger = undefined;
    feed.listeners.add(listener);
    this.start();
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      feed.listeners.delete(listener);
      if (feed.listeners.size > 0 || this.feeds.get(tenant) !== feed) return;
      feed.linger = setTimeout(() => this.dropFeed(tenant, feed), FEED_LINGER_MS);
      feed.linger.unref();
    };
  }

  /** Drops a feed that has had no listener for FEED_LINGER_MS. */
  private dropFeed(tenant: string, feed: TenantFeed): void {
    if (feed.listeners.size > 0 || this.feeds.get(tenant) !== feed) return;
    this.feeds.delete(tenant);
    this.pending.delete(tenant);
    this.source.release(tenant);
  }

  async signalCancel(signal: CancelSignal): Promise<void> {
    await this.options.redis.publish(this.c.keys.cancelChannel(), JSON.stringify(signal));
  }

  onCancel(listener: (signal: CancelSignal) => void): () => void {
    const entry = (signal: CancelSignal) => listener(signal);
    this.cancelListeners.add(entry);
    // Its own channel, subscribed only by processes that execute runs (ioredis resubscribes after a reconnect).
    this.cancelSubscription ??= this.source.subscribeCancel().then(
      () => undefined,
      (error: unknown) => {
        this.cancelSubscription = undefined;
        this.onError(error);
      },
    );
    return () => this.cancelListeners.delete(entry);
  }

  async ready(timeoutMs: number): Promise<void> {
    this.start();
    if (this.settled()) return;
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
    this.source.detach();
    clearTimeout(this.retryTimer);
    for (const feed of this.feeds.values()) clearTimeout(feed.linger);
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
    this.feeds.set(tenant, feed);
    if (this.source.perTenant) {
      // Its channel is not subscribed yet: held until it is, then caught up from the baseline.
      feed.seam.hold();
      this.pending.add(tenant);
      if (this.started) void this.sync();
    } else if (this.started && !this.live) {
      // Opened while disconnected: what it may miss is recovered at the next catch-up.
      feed.seam.hold();
    }
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
      const [newest] = await this.options.redis.xrevrange(this.c.keys.events(tenant), '+', '-', 'COUNT', 1);
      return newest?.[0] ?? '0-0';
    } catch {
      return fallback;
    }
  }

  /** Live delivery is established for every feed: what `ready` waits for. */
  private settled(): boolean {
    return this.live && this.pending.size === 0;
  }

  private start(): void {
    if (this.started) return;
    this.started = true;
    void this.sync();
  }

  private onAnnouncement(message: string): void {
    let stored: StoredEvent;
    try {
      stored = JSON.parse(message) as StoredEvent;
      // A waited run's end carries the run hash as it ended (stepRun): the domain's Run here.
      if (stored.stop) {
        const run = toRun(stored.stop.run as unknown as Record<string, string>);
        if (run) stored.stop.run = run;
        else delete stored.stop;
      }
    } catch (error) {
      this.onError(new Error('An event announcement is not JSON.', { cause: error }));
      return;
    }
    this.feeds.get(stored.tenant)?.seam.push(stored);
  }

  private onCancelMessage(message: string): void {
    try {
      const signal = JSON.parse(message) as CancelSignal;
      for (const listener of [...this.cancelListeners]) listener(signal);
    } catch (error) {
      this.onError(new Error('A cancel signal is not JSON.', { cause: error }));
    }
  }

  private onLost(): void {
    if (!this.started || this.closed) return;
    this.live = false;
    this.epoch += 1;
    for (const [tenant, feed] of this.feeds) {
      feed.seam.hold();
      if (this.source.perTenant) this.pending.add(tenant);
    }
  }

  /**
   * Subscribes what is not confirmed yet (the channel, or the pending tenants' channels), then
   * catches up every holding feed whose subscription is confirmed. A failure is retried after
   * `retryMs`; not being connected waits for the source's `regained`.
   */
  private async sync(): Promise<void> {
    if (this.syncing) {
      this.syncAgain = true;
      return;
    }
    this.syncing = true;
    try {
      do {
        this.syncAgain = false;
        if (this.closed) return;
        const epoch = this.epoch;
        const tenants = [...this.pending];
        let confirmed: boolean;
        try {
          confirmed = await withTimeout(this.source.subscribe(tenants), SUBSCRIBE_TIMEOUT_MS);
        } catch (error) {
          this.onError(error);
          this.retryLater();
          return;
        }
        if (!confirmed || this.closed) return;
        if (epoch !== this.epoch) {
          this.syncAgain = true;
          continue;
        }
        for (const tenant of tenants) this.pending.delete(tenant);
        this.live = true;
        if (this.settled()) for (const done of [...this.waiters]) done();
        await this.catchUp();
      } while (this.syncAgain && !this.closed);
    } finally {
      this.syncing = false;
    }
  }

  /** Catches up every holding feed whose subscription is confirmed; a failed read is retried after `retryMs`. */
  private async catchUp(): Promise<void> {
    for (const [tenant, feed] of this.feeds) {
      if (!feed.seam.holding || this.pending.has(tenant)) continue;
      const epoch = this.epoch;
      try {
        const from = feed.seam.lastId ?? (await feed.baseline);
        await feed.seam.catchUp((afterId, count) => this.readAfter(tenant, afterId, count), from, PAGE);
      } catch (error) {
        this.onError(error);
        this.retryLater();
        continue;
      }
      // Lost again meanwhile: keep holding until the next catch-up.
      if (this.epoch !== epoch || !this.live || this.pending.has(tenant)) feed.seam.hold();
    }
  }

  private retryLater(): void {
    if (this.retryTimer || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      // Disconnected, the bus waits for `regained` instead of failing every few seconds.
      if (this.source.connected()) void this.sync();
    }, this.options.retryMs ?? 500);
    this.retryTimer.unref();
  }
}
