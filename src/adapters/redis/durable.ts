import { Command, type Cluster, type Redis } from 'ioredis';
import type { ReplicaWait } from '../../config-redis.js';
import { AppError } from '../../domain/errors.js';
import { isCluster, type RedisClient } from './connection.js';

/**
 * Called after the writes a caller is about to acknowledge, with one key of each slot they
 * touched: resolves once enough replicas have them (Redis `WAIT`), else rejects with AppError
 * `unavailable`.
 */
export type Replicated = (keys: readonly string[]) => Promise<void>;

/** Client-side bound of one WAIT beyond its own timeout: a master that stops answering. */
const CLIENT_MARGIN_MS = 1_000;

/**
 * Durable acknowledgements on one client (REDIS_WAIT_REPLICAS, REDIS_WAIT_TIMEOUT_MS): `WAIT
 * numreplicas timeout` on the connection that performed the writes, so an acknowledged write
 * is on that many replicas as well as on the master, and survives the master's loss when one
 * of them is promoted (Sentinel and Redis Cluster promote the replica with the most data).
 *
 * WAIT counts the replicas that have every earlier write of its connection; it has to go over
 * that same connection: on a cluster, the connection to the master of each slot written (the
 * tenant's keys and the global ones, BullMQ's `{prefix}` on the queue's client, may be on
 * different masters: one WAIT each, in parallel). A connection replaced between the writes
 * and WAIT's answer (a reconnect, a failover) would answer for a connection that wrote
 * nothing: that counts as not confirmed.
 */
export class DurableWrites {
  /** Connections closed so far, of the client or of any of a cluster's nodes. */
  private closes = 0;
  /** Writes not confirmed since the last report. */
  private unconfirmed = 0;
  private reportedAt = 0;

  constructor(
    private readonly client: RedisClient,
    private readonly wait: ReplicaWait,
    /** Writes not confirmed since the last call, at most one call per 10 s (a log line). */
    private readonly onUnconfirmed?: (count: number, error: AppError) => void,
    /** Each write not confirmed, as it happens (a counter). */
    private readonly onEachUnconfirmed?: () => void,
  ) {
    const count = (redis: Redis) => redis.on('close', () => (this.closes += 1));
    if (isCluster(client)) {
      client.nodes().forEach(count);
      client.on('+node', count);
    } else {
      count(client);
    }
  }

  /**
   * Call before the writes; the function it answers after them. Nothing to call when the
   * setting is off: a caller keeps `undefined` and sends no extra command.
   */
  track(): Replicated {
    const closes = this.closes;
    return async (keys) => {
      const acked = await Promise.all(this.targets(keys).map((slot) => this.send(slot)));
      const fewest = Math.min(...acked);
      if (this.closes !== closes) throw this.notConfirmed(`a connection to Redis was replaced before the replicas confirmed the write`);
      if (fewest < this.wait.replicas) {
        throw this.notConfirmed(`${fewest} of the ${this.wait.replicas} Redis replicas required (REDIS_WAIT_REPLICAS) confirmed the write within ${this.wait.timeoutMs} ms`);
      }
    };
  }

  /** The slots to WAIT on: none (the one connection) on a server, one per master on a cluster. */
  private targets(keys: readonly string[]): (number | undefined)[] {
    const client = this.client;
    if (!isCluster(client)) return [undefined];
    const byMaster = new Map<string, number>();
    for (const key of keys) {
      const slot = new Command('exists', [key]).getSlot();
      // A slot the client has no map of yet goes on its own; the cluster client routes it.
      byMaster.set(client.slots[slot]?.[0] ?? `slot:${slot}`, slot);
    }
    return [...byMaster.values()];
  }

  /** WAIT on the client, or on a cluster's connection to the master of `slot`: the replicas that acknowledged. */
  private async send(slot: number | undefined): Promise<number> {
    const command = new Command('wait', [this.wait.replicas, this.wait.timeoutMs], { replyEncoding: 'utf8' });
    // Set first, it wins over the client's command timeout (shorter on the command connection).
    command.setTimeout(this.wait.timeoutMs + CLIENT_MARGIN_MS);
    if (slot === undefined) void (this.client as Redis).sendCommand(command);
    else void (this.client as Cluster).sendCommand(command, undefined, { slot });
    return Number(await command.promise);
  }

  private notConfirmed(why: string): AppError {
    const error = new AppError('unavailable', `The write was not confirmed by Redis replicas (${why}); it may or may not persist. Retry shortly.`, {
      headers: { 'Retry-After': '1' },
    });
    this.unconfirmed += 1;
    this.onEachUnconfirmed?.();
    const now = Date.now();
    if (now - this.reportedAt >= REPORT_EVERY_MS) {
      this.onUnconfirmed?.(this.unconfirmed, error);
      this.unconfirmed = 0;
      this.reportedAt = now;
    }
    return error;
  }
}

/** Smallest pause between two reports of unconfirmed writes. */
const REPORT_EVERY_MS = 10_000;

/** The durable acknowledgements of `client` when the setting asks for any, undefined otherwise (no WAIT at all). */
export function durableWrites(
  client: RedisClient,
  wait: ReplicaWait | undefined,
  onUnconfirmed?: (count: number, error: AppError) => void,
  onEachUnconfirmed?: () => void,
): DurableWrites | undefined {
  return wait && wait.replicas > 0 ? new DurableWrites(client, wait, onUnconfirmed, onEachUnconfirmed) : undefined;
}
