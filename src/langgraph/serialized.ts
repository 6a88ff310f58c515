import { JsonPlusSerializer, type SerializerProtocol } from '@langchain/langgraph-checkpoint';
import { badRequest } from '../domain/errors.js';

/**
 * A value serialized by LangGraph's serializer as one string for storage: `j` and the JSON text
 * for the `json` type (what the default serializer answers for everything but raw bytes), else
 * `b`, the type, `:` and the bytes in base64.
 */
export async function serialize(serde: SerializerProtocol, value: unknown): Promise<string> {
  // LangGraph's own serializer writes plain JSON data as JSON.stringify does (its replacer leaves
  // it as it is, its UTF-8 bytes read back are the same text): that text without the round trip.
  if (isJsonPlus(serde) && isPlainJson(value, 0)) return `j${JSON.stringify(value)}`;
  const [type, bytes] = await serde.dumpsTyped(value);
  // The bytes read in place (Buffer.from(bytes) would copy them first).
  if (type === 'json') return `j${typeof bytes === 'string' ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')}`;
  if (type.includes(':')) throw badRequest(`The serializer answered the type "${type}", which storage cannot name (it holds ":").`);
  return `b${type}:${Buffer.from(bytes).toString('base64')}`;
}

/** Reads a value {@link serialize} wrote. */
export async function deserialize(serde: SerializerProtocol, stored: string): Promise<unknown> {
  if (stored.startsWith('j')) {
    // LangGraph's own serializer revives only objects with an `lc` key; without any, what it
    // answers is the parsed JSON, copied.
    if (isJsonPlus(serde)) {
      const parsed: unknown = JSON.parse(stored.slice(1));
      if (!holdsRecords(parsed, 0)) return parsed;
    }
    return serde.loadsTyped('json', stored.slice(1));
  }
  const at = stored.indexOf(':');
  return serde.loadsTyped(stored.slice(1, at), new Uint8Array(Buffer.from(stored.slice(at + 1), 'base64')));
}

/** Nesting past this is left to the serializer (it finds cycles). */
const MAX_DEPTH = 32;

/** LangGraph's JsonPlusSerializer itself, not a subclass nor an instance with its methods replaced. */
function isJsonPlus(serde: SerializerProtocol): boolean {
  return Object.getPrototypeOf(serde) === JsonPlusSerializer.prototype && !Object.hasOwn(serde, 'dumpsTyped') && !Object.hasOwn(serde, 'loadsTyped') && !Object.hasOwn(serde, '_dumps') && !Object.hasOwn(serde, '_loads');
}

/**
 * Strings, finite numbers, booleans, null, and arrays and plain objects of them, not too deep:
 * what JsonPlusSerializer's replacer leaves as it is (not undefined, a function, a Set, a Map, a
 * RegExp, an Error, a Uint8Array, a Send or anything else with a prototype of its own, nor a
 * plain object with an `lg_name` key, which it takes for a Send).
 */
function isPlainJson(value: unknown, depth: number): boolean {
  if (value === null) return true;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      break;
    default:
      return false;
  }
  if (depth >= MAX_DEPTH) return false;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return false;
    for (let i = 0; i < value.length; i += 1) if (!isPlainJson(value[i], depth + 1)) return false;
    return true;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) return false;
    if (key === 'lg_name') return false;
    if (!isPlainJson((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

/** Whether parsed JSON holds an object JsonPlusSerializer's reviver would not copy as it is (one with an `lc` or `__proto__` key), or nests too deep to tell. */
function holdsRecords(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (depth >= MAX_DEPTH) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) if (holdsRecords(value[i], depth + 1)) return true;
    return false;
  }
  for (const key in value) {
    if (key === 'lc' || key === '__proto__') return true;
    if (holdsRecords((value as Record<string, unknown>)[key], depth + 1)) return true;
  }
  return false;
}

/**
 * Refuses an identifier that storage cannot hold: not a string, or holding NUL (the separator
 * of stored names). `allowEmpty` for the root checkpoint namespace "".
 */
export function storageId(field: string, value: unknown, allowEmpty = false): string {
  if (typeof value !== 'string' || (!allowEmpty && value === '') || value.includes('\u0000')) {
    throw badRequest(`configurable.${field} must be a ${allowEmpty ? '' : 'non-empty '}string without NUL characters.`);
  }
  return value;
}
