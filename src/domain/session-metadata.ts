import { AppError } from './errors.js';
import type { JsonObject } from './types.js';

/** Largest JSON text of a session's metadata, in UTF-8 bytes; a write past it changes nothing. */
export const MAX_SESSION_METADATA_BYTES = 64 * 1024;

/** A metadata write that would take the session's metadata past MAX_SESSION_METADATA_BYTES. */
export const metadataTooLarge = (bytes: number): AppError =>
  new AppError(
    'payload_too_large',
    `The session metadata would take ${bytes} bytes of JSON, more than the limit of ${MAX_SESSION_METADATA_BYTES}.`,
  );

/**
 * Each key of `metadata` with its value's JSON text, as the stores keep it (raw JSON, never
 * re-encoded). A value JSON drops (undefined, a function) is absent. Throws AppError
 * `bad_request` for a value JSON cannot hold (a BigInt, a cycle), before anything is written.
 */
export function metadataJson(metadata: JsonObject): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, value] of Object.entries(metadata)) {
    let json: string | undefined;
    try {
      json = JSON.stringify(value);
    } catch (error) {
      throw new AppError('bad_request', `The session metadata key ${JSON.stringify(key)} is not JSON: ${(error as Error).message}`, { cause: error });
    }
    if (json !== undefined) out.set(key, json);
  }
  return out;
}

/**
 * `metadata` with `patch` applied as a LangGraph thread patch merges: a shallow merge where a
 * key set to null is removed. Throws `payload_too_large` when the result's JSON passes
 * MAX_SESSION_METADATA_BYTES; values come back as JSON gives them.
 */
export function mergeMetadata(metadata: JsonObject, patch: JsonObject): JsonObject {
  const merged: JsonObject = { ...metadata };
  for (const [key, json] of metadataJson(patch)) {
    if (json === 'null') delete merged[key];
    else merged[key] = JSON.parse(json) as unknown;
  }
  return checkedMetadata(merged);
}

/** A new session's metadata as JSON gives it back; `payload_too_large` past the bound. */
export function newMetadata(metadata: JsonObject = {}): JsonObject {
  return checkedMetadata(Object.fromEntries([...metadataJson(metadata)].map(([key, json]) => [key, JSON.parse(json) as unknown])));
}

function checkedMetadata(metadata: JsonObject): JsonObject {
  const bytes = new TextEncoder().encode(JSON.stringify(metadata)).length;
  if (bytes > MAX_SESSION_METADATA_BYTES) throw metadataTooLarge(bytes);
  return metadata;
}

/**
 * A LangGraph run's `metadata` (and its `config.metadata`) is held to the cap of a thread's:
 * `payload_too_large` naming `field` when its JSON passes MAX_SESSION_METADATA_BYTES.
 */
export function checkRunMetadata(field: string, metadata: JsonObject | undefined): void {
  if (metadata === undefined) return;
  const bytes = new TextEncoder().encode(JSON.stringify(metadata)).length;
  if (bytes > MAX_SESSION_METADATA_BYTES) {
    throw new AppError('payload_too_large', `${field}: the run metadata takes ${bytes} bytes of JSON, more than the limit of ${MAX_SESSION_METADATA_BYTES} (as a thread's).`);
  }
}
