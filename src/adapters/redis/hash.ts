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
