import type { IncomingMessage } from 'node:http';
import { AppError } from '../../domain/errors.js';
import { jsonProblem } from '../../domain/json-problem.js';

/** The request body limit of every inbound integration endpoint: 1 MiB. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Reads the request body as the exact bytes the sender signed. Signatures are computed over
 * these bytes, never over re-serialised JSON, so this must run before any body parser.
 * Throws AppError `payload_too_large` as soon as the declared or the received length exceeds
 * `limitBytes`; the rest of the upload is then discarded unread.
 */
export function readRawBody(req: IncomingMessage, limitBytes: number = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) {
    req.resume();
    return Promise.reject(tooLarge(limitBytes));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limitBytes) {
        cleanup();
        req.resume();
        reject(tooLarge(limitBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(Buffer.concat(chunks, received));
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(new AppError('bad_request', 'The request body could not be read.', { cause: error }));
    };
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

function tooLarge(limitBytes: number): AppError {
  return new AppError('payload_too_large', `The request body exceeds ${limitBytes} bytes.`);
}

/**
 * Parses a body as JSON; throws AppError `bad_request` when it is not JSON, or, as the API
 * does, when it nests deeper than its limit or holds a number that would not come back as sent.
 */
export function parseJsonBody(body: Buffer): unknown {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new AppError('bad_request', 'The request body is not valid JSON.', { cause: error });
  }
  const problem = jsonProblem(value);
  if (problem) throw new AppError('bad_request', problem);
  return value;
}
