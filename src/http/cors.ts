import type { Middleware } from 'koa';
import type { LangGraphCors } from '../langgraph/langgraph-json.js';

/**
 * Cross-origin requests from browsers, as LangGraph's server answers them (hono's cors with
 * the `http.cors` of its langgraph.json): without settings every origin may call the API
 * (`Access-Control-Allow-Origin: *`, no credentials), as a browser client such as agent-chat-ui
 * or a `useStream` page on another origin needs. Preflights (OPTIONS with an Origin) are answered
 * 204 before authentication: they carry no credential.
 */

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

/**
 * The policy of a process: SERVICE_CORS_ORIGINS (`*`, `off`, or a comma-separated list) for the
 * origins when set, else the langgraph.json's `http.cors`, else every origin. `undefined`: off,
 * no CORS headers at all.
 */
export function corsPolicy(originsSetting: string | undefined, fromFile: LangGraphCors | undefined): CorsPolicy | undefined {
  if (originsSetting === 'off') return undefined;
  const file = fromFile ?? {};
  let origins: CorsPolicy['origins'];
  if (originsSetting !== undefined) origins = originsSetting === '*' ? '*' : originsSetting.split(',').map((origin) => origin.trim());
  else if (file.allow_origin_regex !== undefined) origins = new RegExp(file.allow_origin_regex);
  else origins = file.allow_origins && !file.allow_origins.includes('*') ? file.allow_origins : '*';
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
function allowedOrigin(policy: CorsPolicy, origin: string): string | undefined {
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
