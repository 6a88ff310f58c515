import type { Context } from 'koa';
import type { z } from 'zod';
import { ROLE_RANK, type Principal, type Role } from '../domain/types.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ResponseSpec {
  description: string;
  /** JSON body schema; omit for bodies that are not JSON (see `contentType`). */
  schema?: z.ZodType;
  /** @defaultValue application/json */
  contentType?: string;
  /** Headers the response carries, for the OpenAPI document. */
  headers?: Record<string, string>;
  /** Named examples of the body, for the OpenAPI document (error responses: one per code). */
  examples?: Record<string, Example>;
}

/** A named example of a body in the OpenAPI document. */
export interface Example<T = unknown> {
  summary: string;
  value: T;
}

/** What a handler sees: validated inputs, the caller, and the raw Koa context for streams. */
export interface RouteInput<Q, P, B, H = undefined> {
  query: Q;
  params: P;
  body: B;
  /** The request headers the route declares (names in lower case), validated. */
  headers: H;
  principal: Principal;
  ctx: Context;
}

/** A handler answers with a status and a JSON body, or takes over `ctx` (streams, text). */
export type RouteResult = { status: number; body: unknown; headers?: Record<string, string> } | 'handled';

/**
 * One route, declared once. The router, input validation, the RBAC gate and the OpenAPI
 * document are all built from these declarations, so none of them can drift from the others.
 */
export interface Route<Q = unknown, P = unknown, B = unknown, H = unknown> {
  method: HttpMethod;
  /** Koa-router pattern, e.g. `/api/schedules/:id`. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  /**
   * Always public: no credential, no rate limit (probes, metrics, console).
   * @defaultValue false
   */
  public?: boolean;
  /**
   * Minimum role beyond the method rule (GET/HEAD viewer, others user); the higher of the two
   * is enforced when RBAC is on.
   */
  minRole?: Role;
  /**
   * A POST that only reads (a search with its filters in the body): the method rule treats it
   * as a GET (viewer).
   * @defaultValue false
   */
  readOnly?: boolean;
  /**
   * Error bodies also carry `detail`, the message again: the field LangGraph clients read
   * (the LangGraph Server API routes).
   * @defaultValue false
   */
  errorDetail?: boolean;
  /**
   * The body is read as JSON whatever its Content-Type says (`text/plain`, none, …), as
   * LangGraph's server reads it: browser clients send JSON as text/plain to skip a preflight.
   * Otherwise a body that is not application/json is 415 (the LangGraph Server API routes).
   * @defaultValue false
   */
  anyContentType?: boolean;
  query?: z.ZodType<Q>;
  params?: z.ZodType<P>;
  body?: z.ZodType<B>;
  /** Request headers the route reads: a z.object of lower-case names, validated and documented like the query. */
  headers?: z.ZodType<H>;
  /**
   * Named examples of the body, for the OpenAPI document. The first one is what the Swagger
   * console's "Try it out" sends: it must succeed against a fresh server with the defaults.
   */
  bodyExamples?: Record<string, Example<NoInfer<B>>>;
  responses: Record<number, ResponseSpec>;
  handler: (input: RouteInput<Q, P, B, H>) => Promise<RouteResult>;
}

/** Erases the generic parameters so routes of different shapes fit in one list. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = Route<any, any, any, any>;

export function defineRoute<Q = undefined, P = undefined, B = undefined, H = undefined>(route: Route<Q, P, B, H>): AnyRoute {
  return route as AnyRoute;
}

/** The role RBAC requires for a route: the method rule (reads: viewer), raised by the route's own minimum. */
export function requiredRole(route: Pick<Route, 'method' | 'minRole' | 'readOnly'>): Role {
  const byMethod: Role = route.method === 'GET' || route.readOnly ? 'viewer' : 'user';
  if (!route.minRole) return byMethod;
  return ROLE_RANK[route.minRole] > ROLE_RANK[byMethod] ? route.minRole : byMethod;
}
