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
