import type Koa from 'koa';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { LEGACY_LANGGRAPH_CONFIG_WARNING, loadConfig } from '../config.js';
import type { AnyRoute } from '../http/route.js';
import type { Agent } from '../runtime/agent.js';
import { createApiServer } from './api-server.js';
import { compose, type Composition } from './compose.js';
import { startTracing, stopTracing } from '../observability/tracing.js';
import { createLogger } from './logger.js';
import { graphEngineFor } from './graphs.js';
import { httpAppOf, loadAgentsAndGraphs, uiBundlesOf } from './process.js';
import { securityOptions } from './security.js';

export interface AgentplaneOptions {
  /**
   * The agents to serve, beside the graphs of SERVICE_LANGGRAPH_JSON (none may have an agent's id).
   * @defaultValue those of AGENTS_MODULE, else the built-in ones
   */
  agents?: readonly Agent[];
  /**
   * Settings, as the environment variables of README's Configuration table (`REDIS_URL`,
   * `SERVICE_AUTH`, `SERVICE_LANGGRAPH_JSON`, …); validated like a process's. @defaultValue process.env
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** @defaultValue a pino logger at LOG_LEVEL, JSON lines on stdout */
  logger?: Logger;
}

/** The agentplane API inside a program of yours. */
export interface Agentplane {
  /** The API as a Koa application, e.g. `http.createServer(agentplane.app.callback())`. */
  readonly app: Koa;
  /**
   * The same API as middleware of a Koa app of yours: it answers its own paths (`/api/…`,
   * `/health/…`, `/metrics`, `/swagger…`) and passes every other request on untouched.
   */
  readonly middleware: Middleware;
  /**
   * What the API runs on: `runs` starts and resumes runs (the webhook `runBridge` and the
   * Telegram approval bridge take it), `backend.store` reads. Without REDIS_URL runs execute
   * in this process already; with it, run `agentplane worker` processes, or call
   * `composition.startExecuting()` to execute runs here as well.
   */
  readonly composition: Composition;
  /** Ends open event streams, stops background work and closes Redis. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * Builds the API of one process from settings and agents, for mounting on an application of
 * your own. The settings are validated as at a process start: a bad value throws ConfigError.
 */
export async function createAgentplane(options: AgentplaneOptions = {}): Promise<Agentplane> {
  const config = loadConfig(options.env ?? process.env);
  const logger = options.logger ?? createLogger(config.LOG_LEVEL);
  // Before anything it instruments; off unless the process's OTEL_* variables ask for traces.
  startTracing(config.redis ? 'api' : 'embedded', logger);
  if (config.legacyLangGraphConfig) logger.warn(LEGACY_LANGGRAPH_CONFIG_WARNING);
  const agents = await loadAgentsAndGraphs(config, options.agents, logger);
  const httpApp = await httpAppOf(config);
  const composition = compose(config, { logger, agents, httpApp, graphEngine: await graphEngineFor(agents) });
  const api = createApiServer(composition, { ...securityOptions(config, composition.backend.limiters), uiBundles: await uiBundlesOf(config) });
  const owns = ownedPaths(api.routes, config.SERVICE_SWAGGER);
  const handle = chain(api.app.middleware);
  let closing: Promise<void> | undefined;
  return {
    app: api.app,
    middleware: (ctx, next) => (owns(ctx.path) ? handle(ctx, next) : next()),
    composition,
    close: () =>
      (closing ??= (async () => {
        api.deps.streams.endAll();
        await composition.close();
        await stopTracing();
      })()),
  };
}

/** Whether a path is the API's: under the first segment of a declared route, or the console's. */
function ownedPaths(routes: readonly AnyRoute[], swagger: boolean): (path: string) => boolean {
  const roots = new Set(routes.map((route) => `/${route.path.split('/')[1] ?? ''}`));
  if (swagger) roots.add('/swagger');
  return (path) => [...roots].some((root) => path === root || path.startsWith(`${root}/`));
}

/** Runs a list of Koa middleware in order as one, continuing with `next` after the last. */
function chain(middleware: readonly Middleware[]): Middleware {
  return (ctx, next) => {
    const dispatch = async (index: number): Promise<void> => {
      const current = middleware[index];
      if (!current) return next();
      await current(ctx, () => dispatch(index + 1));
    };
    return dispatch(0);
  };
}
