import { idempotencyKeyReused } from '../../domain/errors.js';
import { IDEMPOTENCY_TTL_MS, type IdempotentStart } from '../../domain/idempotency.js';

/** Keys kept at most (the oldest go first): with the 24 h expiry, what bounds the embedded mode's memory. */
export const MAX_IDEMPOTENCY_KEYS = 100_000;

interface KeyRecord {
  fingerprint: string;
  runId: string;
  expiresMs: number;
}

/**
 * The Idempotency-Keys of run starts in one process: per tenant and scope, the run each
 * created, for IDEMPOTENCY_TTL_MS. Insertion order is expiry order (one TTL for all), so
 * expired keys are dropped from the front as new ones come, and past `maxKeys` the oldest go.
 */
export class MemoryIdempotencyKeys {
  private readonly records = new Map<string, KeyRecord>();

  constructor(
    private readonly clock: () => number,
    private readonly maxKeys = MAX_IDEMPOTENCY_KEYS,
  ) {}

  /** The run id stored for the key, if any; throws `idempotency_key_reused` when its fingerprint differs. */
  find(tenant: string, key: IdempotentStart): string | undefined {
    const record = this.records.get(this.name(tenant, key));
    if (!record || record.expiresMs <= this.clock()) return undefined;
    if (record.fingerprint !== key.fingerprint) throw idempotencyKeyReused();
    return record.runId;
  }

  /** Whether the key is stored (unexpired), whatever its fingerprint. */
  has(tenant: string, key: IdempotentStart): boolean {
    const record = this.records.get(this.name(tenant, key));
    return record !== undefined && record.expiresMs > this.clock();
  }

  /** Stores the key with the run it created. */
  remember(tenant: string, key: IdempotentStart, runId: string): void {
    const now = this.clock();
    for (const [name, record] of this.records) {
      if (record.expiresMs > now && this.records.size < this.maxKeys) break;
      this.records.delete(name);
    }
    // Set anew at the end, where the newest expiry goes (a Map keeps a re-set key in its old place).
    this.records.delete(this.name(tenant, key));
    this.records.set(this.name(tenant, key), { fingerprint: key.fingerprint, runId, expiresMs: now + IDEMPOTENCY_TTL_MS });
  }

  private name(tenant: string, key: IdempotentStart): string {
    return `${tenant}\n${key.scope}`;
  }
}
