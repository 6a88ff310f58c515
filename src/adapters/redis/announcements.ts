import type { Cluster, Redis } from 'ioredis';
import { isCluster, type RedisClient } from './connection.js';
import type { RedisKeys } from './keys.js';

/** What the event bus hears from its subscriber connection. */
export interface AnnouncementHandlers {
  /** An event announcement (a StoredEvent as JSON). */
  announcement(message: string): void;
  /** A message on the cancel channel. */
  cancel(message: string): void;
  /** Announcements may be missed from now on: hold live delivery until a catch-up. */
  lost(): void;
  /** A subscribe may succeed now (connected, or the cluster's subscribers were reset). */
  regained(): void;
}

/**
 * How announcements reach a process: the one events channel (one Redis, Sentinel) or, on a
 * Redis Cluster, each tenant's sharded channel, subscribed while the tenant has listeners.
 */
export interface Announcements {
  /** True when each tenant's channel is subscribed on its own (sharded pub/sub). */
  readonly perTenant: boolean;
  /**
   * Subscribes the events channel, or the channels of `tenants`. Resolves true once the server
   * confirmed every subscription, false when not connected (wait for `regained`); rejects on
   * an error (retry later).
   */
  subscribe(tenants: readonly string[]): Promise<boolean>;
  /** No listener of the tenant is left in this process. */
  release(tenant: string): void;
  /**
   * The subscriber can take a subscription now (a cluster client counts as connected while one
   * of its nodes fails: its subscriptions there are retried).
   */
  connected(): boolean;
  /** Subscribes the cancel channel (classic pub/sub in every mode: it is rare and tiny). */
  subscribeCancel(): Promise<unknown>;
  /** Removes the listeners from the subscriber connection (whose owner quits it). */
  detach(): void;
}

/** The announcements of a subscriber connection: sharded on a cluster, classic otherwise. */
export function announcementsOf(subscriber: RedisClient, keys: RedisKeys, handlers: AnnouncementHandlers): Announcements {
  return isCluster(subscriber) ? shardedAnnouncements(subscriber, keys, handlers) : classicAnnouncements(subscriber, keys, handlers);
}

/**
 * One channel for every tenant on one connection: lost when the connection closes, regained
 * when it is ready again (ioredis resubscribes by itself; the bus confirms with SUBSCRIBE).
 */
function classicAnnouncements(subscriber: Redis, keys: RedisKeys, handlers: AnnouncementHandlers): Announcements {
  const channel = keys.eventsChannel();
  const cancelChannel = keys.cancelChannel();
  const onMessage = (from: string, message: string) => {
    if (from === channel) handlers.announcement(message);
    else if (from === cancelChannel) handlers.cancel(message);
  };
  const onClose = () => handlers.lost();
  const onReady = () => handlers.regained();
  subscriber.on('message', onMessage);
  subscriber.on('close', onClose);
  subscriber.on('ready', onReady);
  return {
    perTenant: false,
    async subscribe() {
      await subscriber.subscribe(channel);
      return subscriber.status === 'ready';
    },
    release() {},
    connected: () => subscriber.status === 'ready',
    subscribeCancel: () => subscriber.subscribe(cancelChannel),
    detach() {
      subscriber.off('message', onMessage);
      subscriber.off('close', onClose);
      subscriber.off('ready', onReady);
    },
  };
}

/**
 * A sharded channel per tenant (SSUBSCRIBE, in the tenant's slot) on a Cluster client with
 * sharded subscribers (one connection per master that serves a subscribed slot). A
 * subscriber connection that ends, or a reset of the subscribers after a topology change (a
 * failover, a slot moved), counts as lost: the bus holds every feed, subscribes its channels
 * again (confirmed by the server), then reads each stream after the last delivered event.
 */
function shardedAnnouncements(subscriber: Cluster, keys: RedisKeys, handlers: AnnouncementHandlers): Announcements {
  const cancelChannel = keys.cancelChannel();
  const onShardMessage = (_from: string, message: string) => handlers.announcement(message);
  const onMessage = (from: string, message: string) => {
    if (from === cancelChannel) handlers.cancel(message);
  };
  const onLost = () => handlers.lost();
  const onReset = () => {
    handlers.lost();
    handlers.regained();
  };
  const onRegained = () => handlers.regained();
  const listeners: [string, Parameters<Cluster['on']>[1]][] = [
    ['smessage', onShardMessage],
    ['message', onMessage],
    ['-node', onLost],
    ['-subscriber', onLost],
    ['close', onLost],
    ['subscribersReady', onReset],
    ['+subscriber', onRegained],
    ['ready', onRegained],
  ];
  for (const [event, listener] of listeners) subscriber.on(event, listener);
  return {
    perTenant: true,
    async subscribe(tenants) {
      if (subscriber.status !== 'ready') return false;
      await Promise.all(tenants.map((tenant) => subscriber.ssubscribe(keys.eventsShardChannel(tenant))));
      return true;
    },
    release(tenant) {
      subscriber.sunsubscribe(keys.eventsShardChannel(tenant)).catch(() => {});
    },
    connected: () => subscriber.status === 'ready',
    subscribeCancel: () => subscriber.subscribe(cancelChannel),
    detach() {
      for (const [event, listener] of listeners) subscriber.off(event, listener);
    },
  };
}
