/**
 * The `http.app` of a `langgraph.json`: a Hono app (what LangGraph's server mounts), read by its
 * shape since the project brings its own `hono`: `fetch(request, env)` answers a request,
 * `notFound(handler)` sets what answers a request none of its routes takes.
 */
export interface HttpApp {
  fetch(request: Request, env?: unknown): Response | Promise<Response>;
  notFound(handler: (c: HonoContextLike) => Response | Promise<Response>): unknown;
}

/** What agentplane uses of a Hono context in the handler it installs. */
export interface HonoContextLike {
  env: unknown;
  req: { raw: Request; bodyCache?: Record<string, Promise<unknown> | undefined>; text(): Promise<string> };
}
