import { metadataJson } from '../../domain/session-metadata.js';
import type { JsonObject } from '../../domain/types.js';

/** Converts a flat `[field, value, …]` reply (Lua HGETALL) into an object. */
export function flatToObject(flat: unknown[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[String(flat[i])] = String(flat[i + 1]);
  return out;
}

/** Field/value pairs of an object for HSET, skipping undefined values. */
export function objectToPairs(object: object): string[] {
  const pairs: string[] = [];
  for (const [field, value] of Object.entries(object)) {
    if (value !== undefined) pairs.push(field, String(value));
  }
  return pairs;
}

/** State patch as HSET pairs of key and raw JSON; undefined values are absent keys. */
export function statePairs(patch: Record<string, unknown>): string[] {
  const pairs: string[] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (value !== undefined) pairs.push(key, JSON.stringify(value));
  }
  return pairs;
}

/**
 * Session metadata as script pairs (includes/sessionMetadata.lua): each key as JSON and its
 * value's raw JSON; in a `patch`, a null value is '' (the key goes).
 */
export function metadataPairs(metadata: JsonObject, patch: boolean): string[] {
  const pairs: string[] = [];
  for (const [key, json] of metadataJson(metadata)) pairs.push(JSON.stringify(key), patch && json === 'null' ? '' : json);
  return pairs;
}
