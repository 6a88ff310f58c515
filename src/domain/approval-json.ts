import { AppError } from './errors.js';
import { MAX_APPROVAL_JSON_BYTES } from './types.js';

/**
 * `value` (an approval's `payload` or `resume`) as the JSON text the stores keep. Throws AppError
 * `bad_request` for a value JSON cannot hold (undefined, a function, a BigInt, a cycle) and
 * `payload_too_large` past MAX_APPROVAL_JSON_BYTES, before anything is written.
 */
export function approvalJson(field: 'payload' | 'resume', value: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw new AppError('bad_request', `The approval ${field} is not JSON: ${(error as Error).message}`, { cause: error });
  }
  if (json === undefined) throw new AppError('bad_request', `The approval ${field} is not JSON.`);
  const bytes = new TextEncoder().encode(json).length;
  if (bytes > MAX_APPROVAL_JSON_BYTES) {
    throw new AppError('payload_too_large', `The approval ${field} takes ${bytes} bytes of JSON, more than the limit of ${MAX_APPROVAL_JSON_BYTES}.`);
  }
  return json;
}
