import type { JsonObject } from './types.js';

/** Longest pair indexed: UTF-8 bytes of the key's JSON and the value's JSON (a longer one is checked on other candidates). */
export const MAX_INDEXED_PAIR_BYTES = 256;
/** Pairs indexed per session at most: a session with more is listed in the overflow list alone. */
export const MAX_INDEXED_PAIRS = 32;
/** The name of the overflow list among the pairs. */
export const METADATA_OVERFLOW = 'overflow';

/**
 * The metadata index of sessions: a session is listed under each top-level key of its metadata
 * whose value is a scalar (string, number, boolean or null), by the pair's name: the key's JSON,
 * NUL, the value's JSON (as the Redis scripts build it from the stored raw JSON). Objects and
 * arrays are not indexed, nor a pair longer than MAX_INDEXED_PAIR_BYTES: a filter on them is
 * checked on the candidates another pair (or the scan) gives. A session with more than
 * MAX_INDEXED_PAIRS such pairs is listed in the overflow list instead (so one session's
 * metadata makes at most MAX_INDEXED_PAIRS entries), which a lookup reads beside its pair's.
 */
export function metadataPair(key: string, value: unknown): string | undefined {
  if (value !== null && typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return undefined;
  // A number JSON cannot write (NaN, Infinity) is stored as null: it is not looked up as one.
  if (typeof value === 'number' && !Number.isFinite(value)) return undefined;
  const keyJson = JSON.stringify(key);
  const valueJson = JSON.stringify(value);
  if (Buffer.byteLength(keyJson) + Buffer.byteLength(valueJson) > MAX_INDEXED_PAIR_BYTES) return undefined;
  return `${keyJson}\u0000${valueJson}`;
}

/** The lists a session's metadata puts it in: its pairs ({@link metadataPair}), or the overflow list alone. */
export function metadataPairs(metadata: JsonObject): string[] {
  const pairs: string[] = [];
  for (const [key, value] of Object.entries(metadata)) {
    const pair = metadataPair(key, value);
    if (pair !== undefined) pairs.push(pair);
  }
  return pairs.length > MAX_INDEXED_PAIRS ? [METADATA_OVERFLOW] : pairs;
}

/**
 * Which metadata list a session list read asks for (SessionListOptions): the overflow list, a
 * pair's list, null when the pair asked is never indexed (nothing is listed under it), or
 * undefined when the read is not by metadata.
 */
export function metadataListOf(options: { metadata?: { key: string; value: unknown }; metadataOverflow?: boolean }): string | null | undefined {
  if (options.metadataOverflow) return METADATA_OVERFLOW;
  if (!options.metadata) return undefined;
  return metadataPair(options.metadata.key, options.metadata.value) ?? null;
}
