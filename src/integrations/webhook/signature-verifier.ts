import type { IncomingHttpHeaders } from 'node:http';

/** Outcome of a payload signature check; `reason` is safe to show to the sender. */
export type SignatureCheck = { ok: true } | { ok: false; reason: string };

/**
 * Verifies a delivery's signature over the exact bytes received. The receiver answers 401
 * with the reason and calls no handler when the check fails.
 */
export type SignatureVerifier = (rawBody: Buffer, headers: IncomingHttpHeaders) => SignatureCheck;

/** The single value of a header, or undefined when it is absent or repeated. */
export function singleHeader(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}
