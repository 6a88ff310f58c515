import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import type { Operation } from './document.js';

/** One HTTP request as it goes on the wire. */
export interface FuzzRequest {
  method: string;
  /** Path and query string, percent-encoded, exactly as sent. */
  target: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Send the body with `Transfer-Encoding: chunked` rather than `Content-Length`. */
  chunked: boolean;
  /** What turned a valid request into this one; empty for a valid request. */
  mutations: string[];
}

/**
 * A request before it is encoded. Large or unencodable pieces (a 70 kB string, a 20,000-deep
 * array, `1e999`) are markers expanded by {@link encode}, so counterexamples print short and
 * shrink fast (fast-check shrinks the depth or size inside the marker).
 */
export interface Draft {
  path: Record<string, string>;
  query: [string, string][];
  headers: Record<string, string>;
  json?: unknown;
  raw?: string;
  contentType?: string | null;
  contentEncoding?: { value: string; valid: boolean };
  chunked: boolean;
  mutations: string[];
}

/** JSON number literals no JavaScript number holds exactly, spliced into bodies as raw text. */
export const RAW_NUMBERS = ['1e999', '-1e999', '1e-400', '123456789012345678901234567890', '9007199254740993', '-0', '0.1e1', '1E+2'];

export const marker = {
  huge: (unit: 'ascii' | 'utf8', bytes: number) => `@@fuzz-huge-${unit}-${bytes}@@`,
  deep: (shape: 'array' | 'object', depth: number) => `@@fuzz-deep-${shape}-${depth}@@`,
  number: (index: number) => `@@fuzz-number-${index}@@`,
};

/** Replaces markers: in JSON text (quoted, `quoted`) or in a URL (bare). */
function expand(text: string, quoted: boolean): string {
  const q = quoted ? '"' : '';
  return text
    .replace(new RegExp(`${q}@@fuzz-huge-(ascii|utf8)-(\\d+)@@${q}`, 'g'), (_m, unit: string, bytes: string) => {
      const body = unit === 'ascii' ? 'x'.repeat(Number(bytes)) : quoted ? '€'.repeat(Math.ceil(Number(bytes) / 3)) : '%E2%82%AC'.repeat(Math.ceil(Number(bytes) / 3));
      return `${q}${body}${q}`;
    })
    .replace(new RegExp(`${q}@@fuzz-deep-(array|object)-(\\d+)@@${q}`, 'g'), (_m, shape: string, depth: string) => {
      const d = Number(depth);
      return shape === 'array' ? `${'['.repeat(d)}${']'.repeat(d)}` : `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`;
    })
    .replace(new RegExp(`${q}@@fuzz-number-(\\d+)@@${q}`, 'g'), (_m, index: string) => RAW_NUMBERS[Number(index)]!);
}

/** Percent-encodes a value for a URL; a lone surrogate becomes the (invalid) UTF-8 of one. */
export function urlEncode(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return '%ED%A0%80';
  }
}

/** Longest hold of a fuzzed wait (`wait_ms`): holding is the documented answer, not a hang. */
const FUZZ_WAIT_MS = 300;

/**
 * A body of an operation that holds its answer until a run stops (`wait_ms` in its schema)
 * waits at most {@link FUZZ_WAIT_MS}: a run queued behind a paused one may wait for as long as
 * `wait_ms` says (60 s by default), which is right, and would only time the fuzzer out. A valid
 * integer is lowered, anything else is sent as generated.
 */
function boundWait(op: Operation, json: unknown): unknown {
  const properties = (op.body as { properties?: Record<string, unknown> } | undefined)?.properties;
  if (!properties || !('wait_ms' in properties) || typeof json !== 'object' || json === null || Array.isArray(json)) return json;
  const wait = (json as Record<string, unknown>).wait_ms;
  if (wait !== undefined && !(Number.isInteger(wait) && (wait as number) > FUZZ_WAIT_MS)) return json;
  return { ...json, wait_ms: FUZZ_WAIT_MS };
}

/** Encodes a draft into the bytes and headers sent. */
export function encode(op: Operation, draft: Draft): FuzzRequest {
  const path = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => expand(draft.path[name] ?? '', false));
  const query = draft.query.map(([name, value]) => `${name}=${expand(value, false)}`).join('&');
  const headers: Record<string, string> = { ...draft.headers };
  let body: Buffer | undefined;
  const text = draft.raw ?? (draft.json === undefined ? undefined : expand(JSON.stringify(boundWait(op, draft.json)), true));
  if (text !== undefined) {
    body = Buffer.from(text, 'utf8');
    const contentType = draft.contentType === undefined ? 'application/json' : draft.contentType;
    if (contentType !== null) headers['Content-Type'] = contentType;
    if (draft.contentEncoding) {
      headers['Content-Encoding'] = draft.contentEncoding.value;
      if (draft.contentEncoding.valid) body = gzipSync(body);
    }
  }
  return { method: op.method, target: query ? `${path}?${query}` : path, headers, body, chunked: draft.chunked && body !== undefined, mutations: draft.mutations };
}

/** A short, readable form of a request for counterexamples and failure messages. */
export function describeRequest(request: FuzzRequest): string {
  const clip = (s: string) => (s.length > 300 ? `${s.slice(0, 300)}… (${s.length} chars)` : s);
  const headers = Object.entries(request.headers).map(([n, v]) => ` -H ${JSON.stringify(`${n}: ${clip(v)}`)}`).join('');
  const body = request.body ? ` --data-binary ${JSON.stringify(clip(request.body.toString('latin1')))} (${request.body.length} bytes)` : '';
  const how = request.mutations.length > 0 ? `[${request.mutations.join('; ')}] ` : '[valid] ';
  return `${how}${request.method} ${clip(request.target)}${headers}${body}${request.chunked ? ' (chunked)' : ''}`;
}

export const withDescription = (request: FuzzRequest): FuzzRequest =>
  Object.assign(request, { [fc.toStringMethod]: () => describeRequest(request) });

/** A hand-written request (a reproduction), in the form of generated ones. */
export function exactRequest(method: string, target: string, options: { headers?: Record<string, string>; body?: string; why: string }): FuzzRequest {
  const body = options.body === undefined ? undefined : Buffer.from(options.body, 'utf8');
  return withDescription({ method, target, headers: options.headers ?? {}, body, chunked: false, mutations: [options.why] });
}
