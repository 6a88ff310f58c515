import type { SerializerProtocol } from '@langchain/langgraph-checkpoint';
import { badRequest } from '../domain/errors.js';

/**
 * A value serialized by LangGraph's serializer as one string for storage: `j` and the JSON text
 * for the `json` type (what the default serializer answers for everything but raw bytes), else
 * `b`, the type, `:` and the bytes in base64.
 */
export async function serialize(serde: SerializerProtocol, value: unknown): Promise<string> {
  const [type, bytes] = await serde.dumpsTyped(value);
  // The bytes read in place (Buffer.from(bytes) would copy them first).
  if (type === 'json') return `j${typeof bytes === 'string' ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')}`;
  if (type.includes(':')) throw badRequest(`The serializer answered the type "${type}", which storage cannot name (it holds ":").`);
  return `b${type}:${Buffer.from(bytes).toString('base64')}`;
}

/** Reads a value {@link serialize} wrote. */
export async function deserialize(serde: SerializerProtocol, stored: string): Promise<unknown> {
  if (stored.startsWith('j')) return serde.loadsTyped('json', stored.slice(1));
  const at = stored.indexOf(':');
  return serde.loadsTyped(stored.slice(1, at), new Uint8Array(Buffer.from(stored.slice(at + 1), 'base64')));
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
