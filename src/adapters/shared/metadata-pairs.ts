import type { JsonObject } from '../../domain/types.js';

/**
 * The metadata index of sessions: a session is listed under each top-level key of its metadata
 * whose value is a scalar (string, number, boolean or null), by the pair's name: the key's JSON,
 * NUL, the value's JSON (as the Redis scripts build it from the stored raw JSON). Objects and
 * arrays are not indexed: a filter on them is checked on the candidates another pair (or the
 * scan) gives.
 */
export function metadataPair(key: string, value: unknown): string | undefined {
  if (value !== null && typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return undefined;
  // A number JSON cannot write (NaN, Infinity) is stored as null: it is not looked up as one.
  if (typeof value === 'number' && !Number.isFinite(value)) return undefined;
  return `${JSON.stringify(key)}\u0000${JSON.stringify(value)}`;
}

/** The index pairs of a session's metadata ({@link metadataPair}). */
export function metadataPairs(metadata: JsonObject): string[] {
  const pairs: string[] = [];
  for (const [key, value] of Object.entries(metadata)) {
    const pair = metadataPair(key, value);
    if (pair !== undefined) pairs.push(pair);
  }
  return pairs;
}
