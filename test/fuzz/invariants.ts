import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { deref, matchPath, schemaObject, splitTarget, typesOf, type JsonSchema, type OpenApiDocument, type Operation } from './document.js';
import type { FuzzRequest } from './draft.js';
import type { FuzzResponse } from './client.js';

/**
 * The error codes of CONTRACT.md and the status each is answered with. Written out here rather
 * than imported from src/http/errors.ts: the oracle must not be the code under test.
 */
export const ERROR_STATUS: Readonly<Record<string, number>> = {
  bad_request: 400,
  invalid_cron: 400,
  unknown_agent: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  gone: 410,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
};

/** CONTRACT.md: RFC 3339 in UTC with milliseconds. */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const COMPONENTS_ID = 'https://agentplane.test/components.json';

function newAjv(strictTypes: boolean): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, strictTypes, allErrors: false });
  ajv.addKeyword('example');
  ajv.addFormat('date-time', { type: 'string', validate: (s: string) => TIMESTAMP.test(s) && !Number.isNaN(Date.parse(s)) });
  // A webhook: an http(s) URL, or a path of the http.app where there is one (the route says which).
  ajv.addFormat('uri', { type: 'string', validate: (s: string) => URL.canParse(s, 'http://localhost') });
  return ajv;
}

/** The document's `#/components/schemas/X` references, pointed at the components registered with ajv. */
function relink(schema: unknown): unknown {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${COMPONENTS_ID}#/$defs/`));
}

/**
 * The rules a response is held to, compiled from the served document with ajv (JSON Schema
 * 2020-12, strict) and the document's components: responses strictly; request parameters with
 * `strictTypes` off, because the document puts `pattern` beside `type: integer` on paging
 * parameters (harmless, but a strict compiler refuses it).
 */
export class DocumentRules {
  private readonly responses = newAjv(true);
  private readonly requests = newAjv(false);
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(readonly doc: OpenApiDocument) {
    const components = { $id: COMPONENTS_ID, $defs: relink(doc.components?.schemas ?? {}) };
    this.responses.addSchema(components);
    this.requests.addSchema(components);
  }

  private validator(side: 'responses' | 'requests', key: string, schema: JsonSchema): ValidateFunction {
    const id = `${side} ${key}`;
    let validate = this.cache.get(id);
    if (!validate) {
      validate = this[side].compile(relink(schema) as object);
      this.cache.set(id, validate);
    }
    return validate;
  }

  /** Problems with a response to `req`, empty when it keeps every invariant. */
  check(op: Operation, req: FuzzRequest, res: FuzzResponse): string[] {
    const problems: string[] = [];
    if (res.status >= 500) problems.push(`${res.status}: a 5xx answer`);
    if (res.reusable === false) {
      problems.push('the kept-alive connection no longer answers: a next request on it got no answer (the rest of the request body is left unread)');
    }
    const documented = op.doc.responses[String(res.status)] ?? op.doc.responses[`${String(res.status)[0]}XX`] ?? op.doc.responses.default;
    // A request whose path no longer fits the template (a path parameter dropped) is another route's business.
    const ours = matchPath(op.path, splitTarget(req.target)[0]) !== undefined;
    if (!documented && ours) problems.push(`status ${res.status} is not documented for ${op.name} (documented: ${Object.keys(op.doc.responses).join(', ')})`);
    const contentType = String(res.headers['content-type'] ?? '');
    // The LangGraph Server API's routes add `detail` (the message again) to the error bodies the
    // app renders (X-Served-By); Node's HTTP parser answers what it refuses before any route.
    // A request another route answered may carry it or not, as that route does.
    const detail: Detail = !ours ? 'allowed' : (op.doc.tags ?? []).includes('langgraph') && res.headers['x-served-by'] !== undefined ? 'required' : 'absent';
    if (res.status >= 400) problems.push(...errorProblems(res, contentType, detail));
    if (!ours) return problems;
    if (res.status >= 200 && res.status < 300 && documented) problems.push(...this.successProblems(op, res, contentType, documented.content ?? {}));
    if (res.status >= 200 && res.status < 300) {
      const invalid = this.requestProblem(op, req);
      if (invalid) problems.push(`answered ${res.status} to a request its document rejects (${invalid})`);
    }
    return problems;
  }

  private successProblems(op: Operation, res: FuzzResponse, contentType: string, content: Record<string, { schema?: JsonSchema }>): string[] {
    const types = Object.keys(content);
    if (types.length === 0) return [];
    const media = types.find((type) => contentType.startsWith(type.split(';')[0]!.trim()));
    if (!media) return [`Content-Type ${JSON.stringify(contentType)} is not the documented ${types.join(' or ')}`];
    if (res.streamed || !media.startsWith('application/json')) return [];
    const schema = content[media]!.schema;
    if (schema === undefined) return [];
    let body: unknown;
    try {
      body = JSON.parse(res.text);
    } catch {
      return [`a ${res.status} body that is not JSON: ${clip(res.text)}`];
    }
    const validate = this.validator('responses', `${op.name} ${res.status} ${media}`, schema);
    if (validate(body)) return [];
    return [`${res.status} body does not match its documented schema: ${this.responses.errorsText(validate.errors)}; body ${clip(res.text)}`];
  }

  /**
   * Why the document rejects the request, or undefined when it allows it: a required
   * parameter missing, repeated or outside its schema, or a body that is absent, not JSON,
   * not `application/json` (any type on the LangGraph routes), or outside the body schema. Values are decoded as Koa decodes them.
   */
  requestProblem(op: Operation, req: FuzzRequest): string | undefined {
    const [pathPart, queryPart = ''] = splitTarget(req.target);
    const query = new URLSearchParams(queryPart);
    const pathValues = matchPath(op.path, pathPart);
    for (const p of op.parameters) {
      let values: string[];
      if (p.in === 'query') values = query.getAll(p.name);
      else if (p.in === 'path') values = pathValues?.[p.name] !== undefined ? [pathValues[p.name]!] : [];
      else if (p.in === 'header') values = Object.entries(req.headers).filter(([n]) => n.toLowerCase() === p.name.toLowerCase()).map(([, v]) => v);
      else continue;
      if (values.length === 0) {
        if (p.required) return `${p.name} missing`;
        continue;
      }
      const schema = schemaObject(deref(this.doc, p.schema));
      if (values.length > 1 && !typesOf(schema).includes('array')) return `${p.name} repeated`;
      const value = coerce(values[0]!, schema);
      if (value === undefined) return `${p.name}=${clip(values[0]!)} is not a ${typesOf(schema).join('|')}`;
      const validate = this.validator('requests', `${op.name} ${p.in} ${p.name}`, p.schema ?? {});
      if (!validate(value)) return `${p.name}: ${this.requests.errorsText(validate.errors)}`;
    }
    if (!op.body) return undefined;
    if (!req.body || req.body.length === 0) return op.doc.requestBody?.required ? 'no body' : undefined;
    const contentType = Object.entries(req.headers).find(([n]) => n.toLowerCase() === 'content-type')?.[1] ?? '';
    // The LangGraph Server API's routes read a body as JSON whatever its Content-Type (as LangGraph's server does).
    const anyContentType = (op.doc.tags ?? []).includes('langgraph');
    if (!anyContentType && !/^application\/json\s*(;|$)/i.test(contentType)) return `Content-Type ${JSON.stringify(contentType)}`;
    const encoding = Object.entries(req.headers).find(([n]) => n.toLowerCase() === 'content-encoding')?.[1] ?? 'identity';
    let body: unknown;
    try {
      // RFC 8259 §8.1 lets a parser ignore a byte order mark, and the app's body parser does.
      body = JSON.parse(decode(req.body, encoding).toString('utf8').replace(/^\uFEFF/, ''));
    } catch {
      return `body is not JSON (Content-Encoding ${encoding})`;
    }
    const validate = this.validator('requests', `${op.name} body`, op.body);
    return validate(body) ? undefined : `body: ${this.requests.errorsText(validate.errors)}`;
  }
}

/** Whether an error body has `detail` (the message again) beside `error`. */
type Detail = 'required' | 'absent' | 'allowed';

/**
 * The contract's error body: exactly `{"error":{"code","message"}}`, plus `"detail"` equal to
 * the message where `detail` says so; a known code that fits the status; a request id.
 */
function errorProblems(res: FuzzResponse, contentType: string, detail: Detail): string[] {
  const problems: string[] = [];
  if (!contentType.startsWith('application/json')) problems.push(`${res.status} with Content-Type ${JSON.stringify(contentType)}, not application/json`);
  if (!res.headers['x-request-id']) problems.push(`${res.status} without X-Request-Id`);
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    return [...problems, `${res.status} body is not JSON: ${JSON.stringify(clip(res.text))}`];
  }
  const error = (body as { error?: unknown } | null)?.error as Record<string, unknown> | undefined;
  const keys = typeof body === 'object' && body !== null ? Object.keys(body).sort().join() : '';
  const withDetail = keys === 'detail,error';
  const exact =
    (detail === 'required' ? withDetail : detail === 'absent' ? keys === 'error' : withDetail || keys === 'error') &&
    typeof error === 'object' && error !== null && Object.keys(error).sort().join() === 'code,message' &&
    typeof error.code === 'string' && typeof error.message === 'string' &&
    (!withDetail || (body as { detail?: unknown }).detail === error.message);
  const shape = detail === 'required' ? '{"error":{"code","message"},"detail": the message}' : '{"error":{"code","message"}}';
  if (!exact) return [...problems, `${res.status} body is not ${shape}: ${clip(res.text)}`];
  const code = error.code as string;
  if (!(code in ERROR_STATUS)) problems.push(`unknown error code ${JSON.stringify(code)}`);
  else if (ERROR_STATUS[code] !== res.status) problems.push(`code ${code} answered with ${res.status}, the contract says ${ERROR_STATUS[code]}`);
  if ((error.message as string).trim() === '' || /\n\s+at /.test(error.message as string)) problems.push(`error message empty or a stack trace: ${clip(error.message as string)}`);
  return problems;
}

/** The body bytes under their Content-Encoding; throws for an unknown coding or bytes that are not in it. */
function decode(body: Buffer, encoding: string): Buffer {
  switch (encoding.toLowerCase()) {
    case 'identity':
      return body;
    case 'gzip':
      return gunzipSync(body);
    case 'deflate':
      return inflateSync(body);
    case 'br':
      return brotliDecompressSync(body);
    default:
      throw new Error(`unknown Content-Encoding ${encoding}`);
  }
}

function clip(text: string): string {
  return text.length > 400 ? `${text.slice(0, 400)}… (${text.length} chars)` : text;
}

/** A query or path string as the value its schema types it as, or undefined when it is not one. */
function coerce(value: string, schema: Record<string, unknown>): unknown {
  const types = typesOf(schema);
  if (types.length === 0 || types.includes('string')) return value;
  if (types.includes('integer') || types.includes('number')) {
    if (!/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(value)) return undefined;
    const n = Number(value);
    return Number.isFinite(n) ? n : undefined;
  }
  if (types.includes('boolean')) return value === 'true' ? true : value === 'false' ? false : undefined;
  return value;
}
