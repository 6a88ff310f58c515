import type { JsonObject } from './types.js';

export type Parsed = { ok: true; value: JsonObject } | { ok: false; error: string };

/** Parses the text of a JSON editor that must hold an object. */
export function parseJsonObject(text: string): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `Not valid JSON: ${(error as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, error: 'Must be a JSON object: { "key": value, … }' };
  }
  return { ok: true, value: value as JsonObject };
}

export const pretty = (value: unknown): string => JSON.stringify(value, null, 2) ?? 'undefined';

/** JSON with object keys sorted: equal values give equal strings. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.keys(v as JsonObject).sort().map((k) => [k, (v as JsonObject)[k]]))
      : v,
  );
}

export interface Change {
  key: string;
  kind: 'added' | 'removed' | 'changed';
  before?: unknown;
  after?: unknown;
}

/** The top-level keys that differ between two states, in key order. */
export function diffStates(before: JsonObject, after: JsonObject): Change[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const changes: Change[] = [];
  for (const key of keys) {
    const had = Object.hasOwn(before, key);
    const has = Object.hasOwn(after, key);
    if (had && !has) changes.push({ key, kind: 'removed', before: before[key] });
    else if (!had && has) changes.push({ key, kind: 'added', after: after[key] });
    else if (canonical(before[key]) !== canonical(after[key])) changes.push({ key, kind: 'changed', before: before[key], after: after[key] });
  }
  return changes;
}

/**
 * The patch that turns `base` into `edited` under the API's shallow merge: the added and
 * changed keys. A removed key cannot be expressed (the merge keeps it): it is reported.
 */
export function patchOf(base: JsonObject, edited: JsonObject): { patch: JsonObject; removed: string[] } {
  const patch: JsonObject = {};
  const removed: string[] = [];
  for (const change of diffStates(base, edited)) {
    if (change.kind === 'removed') removed.push(change.key);
    else patch[change.key] = change.after;
  }
  return { patch, removed };
}
