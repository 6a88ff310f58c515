/**
 * How LangGraph storage names its records inside a thread or a tenant, the same on both
 * adapters. Parts are joined with NUL, which no part may contain (the saver refuses it), so
 * every name splits back unambiguously and a sorted set ordered by bytes (Redis ZRANGEBYLEX)
 * keeps each namespace's checkpoints, and each checkpoint's writes, contiguous.
 */

const SEP = '\u0000';
/** The byte after SEP: an exclusive upper bound of every name that starts with `x + SEP`. */
const AFTER_SEP = '\u0001';

/** A checkpoint within its thread: `ns NUL id`. */
export const checkpointMember = (ns: string, checkpointId: string): string => `${ns}${SEP}${checkpointId}`;

/** Splits {@link checkpointMember}. */
export function splitCheckpointMember(member: string): { ns: string; checkpointId: string } {
  const at = member.indexOf(SEP);
  return { ns: member.slice(0, at), checkpointId: member.slice(at + 1) };
}

/** The lexical range `[min, max)` of the names that start with `prefix NUL`. */
export function childRange(prefix: string): { min: string; max: string } {
  return { min: `${prefix}${SEP}`, max: `${prefix}${AFTER_SEP}` };
}

/** A channel value blob within its thread: `ns NUL channel NUL version`. */
export const blobField = (ns: string, channel: string, version: string): string => `${ns}${SEP}${channel}${SEP}${version}`;

/** A pending write within its thread: `ns NUL checkpoint NUL task NUL idx`. */
export const writeField = (ns: string, checkpointId: string, taskId: string, idx: number): string =>
  `${checkpointMember(ns, checkpointId)}${SEP}${taskId}${SEP}${idx}`;

/** Splits {@link writeField} into its task id and index. */
export function splitWriteField(field: string): { taskId: string; idx: number } {
  const parts = field.split(SEP);
  return { taskId: parts[2] ?? '', idx: Number(parts[3]) };
}

/**
 * A memory namespace as one string: each label followed by `.` (labels hold no `.`), so a
 * namespace prefix is a string prefix: `["a","b"]` → `a.b.`, which `a.b.c.` starts with and
 * `a.bc.` does not.
 */
export const namespaceName = (labels: readonly string[]): string => labels.map((label) => `${label}.`).join('');

/** Splits {@link namespaceName}. */
export const namespaceLabels = (name: string): string[] => (name === '' ? [] : name.slice(0, -1).split('.'));

/** A memory item within its tenant: `namespace NUL key`. */
export const itemMember = (labels: readonly string[], key: string): string => `${namespaceName(labels)}${SEP}${key}`;

/** Splits {@link itemMember}. */
export function splitItemMember(member: string): { namespace: string[]; key: string } {
  const at = member.indexOf(SEP);
  return { namespace: namespaceLabels(member.slice(0, at)), key: member.slice(at + 1) };
}

/** The lexical range `[min, max)` of the strings that start with `prefix` ("" for all). */
export function prefixRange(prefix: string): { min: string; max?: string } {
  if (prefix === '') return { min: '' };
  // The prefix ends with `.`; the next character bounds it.
  return { min: prefix, max: `${prefix.slice(0, -1)}/` };
}

/**
 * Where a scan of memory items stopped: the namespace name and the place (a number growing with
 * each item put new in that namespace) of the last item read, `namespace NUL place`.
 */
export const itemCursor = (namespace: string, place: number | string): string => `${namespace}${SEP}${place}`;

/** Splits {@link itemCursor}. */
export function splitItemCursor(cursor: string): { namespace: string; place: number } {
  const at = cursor.indexOf(SEP);
  return { namespace: cursor.slice(0, at), place: Number(cursor.slice(at + 1)) };
}
