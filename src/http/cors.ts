import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Middleware } from 'koa';
import { ConfigError } from '../config.js';

/**
 * Cross-origin requests from browsers, as LangGraph's server answers them (hono's cors with
 * the `http.cors` of its langgraph.json): without settings every origin may call an API with
 * authentication (`Access-Control-Allow-Origin: *`, no credentials), as a browser client such as
 * agent-chat-ui or a `useStream` page on another origin needs. Without authentication the
 * default is pages of loopback origins only (a chat UI on localhost:3000): any other page could
 * otherwise drive the server. Preflights (OPTIONS with an Origin) are answered 204 before
 * authentication: they carry no credential.
 */

/** `http.cors` of a `langgraph.json`, as LangGraph's server reads it. */
export interface LangGraphCors {
  allow_origins?: string[];
  allow_origin_regex?: string;
  allow_methods?: string[];
  allow_headers?: string[];
  allow_credentials?: boolean;
  expose_headers?: string[];
  max_age?: number;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');

/**
 * The `http.cors` of the `langgraph.json` at `path` (SERVICE_LANGGRAPH_JSON), checked; undefined
 * when it has none. (The graphs' loader read the file at start already: it exists and is JSON.)
 * A wrong field is a one-line ConfigError of SERVICE_LANGGRAPH_JSON.
 */
export function langgraphJsonCors(path: string): LangGraphCors | undefined {
  const file = resolve(path);
  if (!existsSync(file)) return undefined;
  const json: unknown = JSON.parse(readFileSync(file, 'utf8'));
  const cors = isObject(json) && isObject(json.http) ? json.http.cors : undefined;
  if (cors === undefined || cors === null) return undefined;
  const fail = (detail: string) => new ConfigError('SERVICE_LANGGRAPH_JSON', `${file}: "http.cors${detail}`);
  if (!isObject(cors)) throw fail('" is not an object');
  for (const field of ['allow_origins', 'allow_methods', 'allow_headers', 'expose_headers'] as const) {
    if (cors[field] !== undefined && !isStringArray(cors[field])) throw fail(`.${field}" is not an array of strings`);
  }
  if (cors.allow_origin_regex !== undefined) {
    if (typeof cors.allow_origin_regex !== 'string') throw fail('.allow_origin_regex" is not a string');
    try {
      new RegExp(cors.allow_origin_regex);
    } catch (error) {
      throw fail(`.allow_origin_regex" is not a regular expression (${(error as Error).message})`);
    }
  }
  if (cors.allow_credentials !== undefined && typeof cors.allow_credentials !== 'boolean') throw fail('.allow_credentials" is not true or false');
  if (cors.max_age !== undefined && (typeof cors.max_age !== 'number' || !Number.isInteger(cors.max_age) || cors.max_age < 0)) throw fail('.max_age" is not a whole number of seconds');
  return cors as LangGraphCors;
}

/** What the API tells browsers of other origins. */
export interface CorsPolicy {
  /** `*`, the allowed origins, or a pattern an allowed origin matches (`allow_origin_regex`). */
  origins: '*' | readonly string[] | RegExp;
  methods: readonly string[];
  /** Allowed request headers; undefined: those the preflight asks for. */
  headers?: readonly string[];
  credentials: boolean;
  expose: readonly string[];
  /** Seconds a browser may keep a preflight's answer; undefined: not said. */
  maxAge?: number;
}

/** LangGraph's server's defaults (hono's), plus the headers of agentplane's own answers a browser client reads. */
const DEFAULT_METHODS = ['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'PATCH'];
const DEFAULT_EXPOSE = ['content-location', 'x-pagination-total', 'x-pagination-next', 'x-request-id', 'location'];
/** Headers LangGraph's server always exposes, added to a list that leaves them out (as it does). */
const ALWAYS_EXPOSED = ['content-location', 'x-pagination-total'];

/** Origins of pages served by this machine: http(s) on localhost, 127.0.0.1 or [::1], any port. */
export const LOOPBACK_ORIGINS = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/;

/**
 * The policy of a process: SERVICE_CORS_ORIGINS (`*`, `off`, or a comma-separated list) for the
 * origins when set, else the langgraph.json's `http.cors`, else every origin, or with `loopbackOnly`
 * (SERVICE_AUTH=none) {@link LOOPBACK_ORIGINS}. An `allow_origin_regex` must match the whole
 * origin (as Starlette's `fullmatch` in LangGraph's Python server): `https://.*\.trusted\.com`
 * does not allow `https://a.trusted.com.evil.net`. `undefined`: off, no CORS headers at all.
 */
export function corsPolicy(originsSetting: string | undefined, fromFile: LangGraphCors | undefined, loopbackOnly = false): CorsPolicy | undefined {
  if (originsSetting === 'off') return undefined;
  const file = fromFile ?? {};
  let origins: CorsPolicy['origins'];
  if (originsSetting !== undefined) origins = originsSetting === '*' ? '*' : originsSetting.split(',').map((origin) => origin.trim());
  else if (file.allow_origin_regex !== undefined) origins = new RegExp(`^(?:${file.allow_origin_regex})$`);
  else if (file.allow_origins?.includes('*')) origins = '*';
  else if (file.allow_origins) origins = file.allow_origins;
  else origins = loopbackOnly ? LOOPBACK_ORIGINS : '*';
  const expose = file.expose_headers?.length ? [...new Set([...file.expose_headers.map((h) => h.toLowerCase()), ...ALWAYS_EXPOSED])] : DEFAULT_EXPOSE;
  return {
    origins,
    methods: file.allow_methods ?? DEFAULT_METHODS,
    ...(file.allow_headers ? { headers: file.allow_headers } : {}),
    credentials: file.allow_credentials === true,
    expose,
    ...(file.max_age !== undefined ? { maxAge: file.max_age } : {}),
  };
}

/** The value of Access-Control-Allow-Origin for a request from `origin`; undefined: not allowed. */
export function allowedOrigin(policy: CorsPolicy, origin: string): string | undefined {
  if (policy.origins === '*') return '*';
  if (origin === '') return undefined;
  if (policy.origins instanceof RegExp) {
    policy.origins.lastIndex = 0;
    return policy.origins.test(origin) ? origin : undefined;
  }
  return policy.origins.includes(origin) ? origin : undefined;
}

/** The middleware of a {@link CorsPolicy}: headers on every answer (errors too), preflights answered here. */
export function corsMiddleware(policy: CorsPolicy): Middleware {
  const methods = policy.methods.join(', ');
  const expose = policy.expose.join(', ');
  return async (ctx, next) => {
    const origin = ctx.get('Origin');
    const allowed = allowedOrigin(policy, origin);
    if (policy.origins !== '*') ctx.vary('Origin');
    if (allowed !== undefined) {
      ctx.set('Access-Control-Allow-Origin', allowed);
      if (policy.credentials) ctx.set('Access-Control-Allow-Credentials', 'true');
    }
    if (ctx.method === 'OPTIONS' && origin !== '') {
      ctx.state.routePattern = 'preflight';
      if (allowed !== undefined) {
        ctx.set('Access-Control-Allow-Methods', methods);
        const headers = policy.headers?.join(', ') ?? ctx.get('Access-Control-Request-Headers');
        if (policy.headers === undefined) ctx.vary('Access-Control-Request-Headers');
        if (headers !== '') ctx.set('Access-Control-Allow-Headers', headers);
        if (policy.maxAge !== undefined) ctx.set('Access-Control-Max-Age', String(policy.maxAge));
      }
      ctx.status = 204;
      return;
    }
    if (allowed !== undefined && expose !== '') ctx.set('Access-Control-Expose-Headers', expose);
    await next();
  };
}
