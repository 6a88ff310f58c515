import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import { builtInAgents } from '../agents/index.js';
import { ConfigError, exitOnConfigError, LEGACY_LANGGRAPH_CONFIG_WARNING, loadConfigOrExit, type Config } from '../config.js';
import { LOOPBACK_ORIGINS, type CorsPolicy } from '../http/cors.js';
import type { Lifecycle } from '../http/deps.js';
import type { AllowedHosts } from '../http/local-guard.js';
import { hostPort } from '../http/listen.js';
import type { Agent } from '../runtime/agent.js';
import type { HttpApp } from '../ports/http-app.js';
import type { UiBundles } from '../ports/ui-bundles.js';
import { AgentsModuleError } from '../runtime/load-error.js';
import { AgentRegistry, loadAgents } from '../runtime/registry.js';
import { compose, type Composition } from './compose.js';
import { graphEngineFor, loadGraphs, withGraphs } from './graphs.js';
import { startTracing, stopTracing, type TracingRole } from '../observability/tracing.js';
import { createLogger } from './logger.js';
import { createShutdown, onTerminationSignals } from './shutdown.js';

/**
 * What every process entry point does first: read the config (a bad value prints the variable
 * and exits 1), make the logger, load the agents and the graphs (with the LangGraph plug-in's
 * engine when there are graphs), and compose the process. With
 * `needsRedis` set, a process that cannot work without Redis says why and exits 1 when
 * REDIS_URL is unset.
 */
export async function bootProcess(options: { needsRedis?: string; config?: Config; role?: TracingRole } = {}): Promise<Composition> {
  const config = options.config ?? loadConfigOrExit();
  const logger = createLogger(config.LOG_LEVEL, undefined, config.LOG_FORMAT);
  if (options.needsRedis && !config.redis) {
    logger.fatal(options.needsRedis);
    process.exit(1);
  }
  // Before anything it instruments (OTEL_* variables; off and free without them).
  const role = options.role === 'api' && !config.redis ? 'embedded' : (options.role ?? 'api');
  if (exitOnConfigError(() => startTracing(role, logger))) logger.info({ role }, 'OpenTelemetry tracing on');
  process.on('unhandledRejection', (error) => logger.error({ err: error }, 'unhandled rejection'));
  if (config.legacyLangGraphConfig) logger.warn(LEGACY_LANGGRAPH_CONFIG_WARNING);
  const agents = await exitOnStartupError(() => loadAgentsAndGraphs(config, undefined, logger));
  const httpApp = await exitOnStartupError(() => httpAppOf(config));
  return compose(config, { logger, agents, httpApp, graphEngine: await graphEngineFor(agents) });
}

/**
 * The `http.app` of SERVICE_LANGGRAPH_JSON, imported (API processes only); undefined when there
 * is none. Through the LangGraph plug-in's light face, as {@link uiBundlesOf}: neither loads LangGraph.
 */
export async function httpAppOf(config: Config): Promise<HttpApp | undefined> {
  if (!config.SERVICE_LANGGRAPH_JSON) return undefined;
  const { loadHttpApp } = await import('../langgraph/light.js');
  return loadHttpApp(config.SERVICE_LANGGRAPH_JSON);
}

/** The generative UI of SERVICE_LANGGRAPH_JSON's `ui`, built (API processes only); undefined when there is none. */
export async function uiBundlesOf(config: Config): Promise<UiBundles | undefined> {
  if (!config.SERVICE_LANGGRAPH_JSON) return undefined;
  const { buildUiBundles } = await import('../langgraph/light.js');
  return buildUiBundles(config.SERVICE_LANGGRAPH_JSON);
}

/**
 * Where `new Client()` of @langchain/langgraph-sdk with no `apiUrl` goes in this process (graphs
 * and the `http.app` calling the API they run in), as LangGraph's server sets it: this API.
 */
export function bindLangGraphClient(url: string): void {
  const global = globalThis as Record<symbol, unknown>;
  global[Symbol.for('langgraph_api:url')] ??= url;
}

/**
 * The agents given (createAgentplane's), else those of AGENTS_MODULE or the built-in ones,
 * beside the graphs of SERVICE_LANGGRAPH_JSON (`logger`: what their getLogger() answers). The graphs load first: the agents module is then the
 * last module imported, whose files `dev --watch` watches (graphs are not reloaded).
 */
export async function loadAgentsAndGraphs(config: Config, given?: readonly Agent[], logger?: Logger): Promise<AgentRegistry> {
  const graphs = config.SERVICE_LANGGRAPH_JSON
    ? await loadGraphs(config.SERVICE_LANGGRAPH_JSON, logger ?? createLogger(config.LOG_LEVEL, undefined, config.LOG_FORMAT))
    : [];
  const agents = given ?? (await loadAgentsOf(config.AGENTS_MODULE)).list();
  const own = given ? "createAgentplane's agents" : config.AGENTS_MODULE && `AGENTS_MODULE (${config.AGENTS_MODULE})`;
  return new AgentRegistry(withGraphs(agents, graphs, own));
}

/**
 * The agents of AGENTS_MODULE; a path with no file, or a module that cannot load or exports
 * no agents, is a ConfigError naming the setting, in one line saying what to change.
 */
async function loadAgentsOf(modulePath: string | undefined): Promise<AgentRegistry> {
  if (!modulePath) return new AgentRegistry(builtInAgents);
  if (!existsSync(resolve(modulePath))) {
    throw new ConfigError('AGENTS_MODULE', `no file at ${resolve(modulePath)}`);
  }
  try {
    return await loadAgents(modulePath);
  } catch (error) {
    if (error instanceof AgentsModuleError) throw new ConfigError('AGENTS_MODULE', error.message);
    throw error;
  }
}

/**
 * Entry-point helper: runs an asynchronous start-up step; a ConfigError (a setting that
 * cannot work) prints its one-line reason, without a stack, and exits 1.
 */
export async function exitOnStartupError<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    // By name too: an agents module loaded through tsx gets its own copy of config.ts's class.
    if (!(error instanceof ConfigError) && (error as Error | null)?.name !== 'ConfigError') throw error;
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(1);
  }
}

/** The settings a server's address comes from, named in the error when it cannot listen. */
export interface AddressSettings {
  host: string;
  port: string;
}

/**
 * Listens with `listen`; a port in use or not allowed, or a host that is not an address of
 * this machine, is one line naming the setting (exit 1), not a stack trace.
 */
export function listenOrExit<T>(settings: AddressSettings, address: { host: string; port: number }, listen: () => Promise<T>): Promise<T> {
  return exitOnStartupError(async () => {
    try {
      return await listen();
    } catch (error) {
      const where = `port ${address.port} on ${address.host}`;
      switch ((error as NodeJS.ErrnoException).code) {
        case 'EADDRINUSE':
          throw new ConfigError(settings.port, `${where} is already in use; stop what holds it or choose another port`);
        case 'EACCES':
          throw new ConfigError(settings.port, `${where} needs privileges this process lacks; choose a port above 1023`);
        case 'EADDRNOTAVAIL':
        case 'ENOTFOUND':
        case 'EAI_AGAIN':
          throw new ConfigError(settings.host, `${address.host} is not an address of this machine`);
        default:
          throw error;
      }
    }
  });
}

/**
 * What a process's start-up line shows of a listening server: the address as configured
 * (`0.0.0.0:8420` when bound to every interface) and a URL to open (`localhost` for a wildcard).
 */
export function listeningAt(server: Server, host: string): { address: string; url: string } {
  const { port } = server.address() as AddressInfo;
  const wildcard = host === '0.0.0.0' || host === '::';
  return { address: hostPort(host, port), url: `http://${hostPort(wildcard ? 'localhost' : host, port)}` };
}

/** What an operator reads of a CORS policy: which web pages of other origins may call. */
export function corsReach(policy: CorsPolicy | undefined): string {
  if (policy === undefined) return 'from no web page of another origin';
  if (policy.origins === '*') return 'from web pages of any origin';
  if (policy.origins === LOOPBACK_ORIGINS) return 'from web pages of loopback origins';
  if (policy.origins instanceof RegExp) return `from web pages of origins matching ${policy.origins.source}`;
  return `from web pages of ${policy.origins.join(', ') || 'no other origin'}`;
}

/**
 * The one line a process without authentication logs at start (`setting` says why it has
 * none): who can call it at `address`, by which Host names, and, given `pages`, from which
 * web pages of other origins.
 */
export function openAccessLine(setting: string, address: string, hosts: AllowedHosts, pages?: string): string {
  const host = address.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
  const loopback = host === 'localhost' || host === '::1' || /^127\./.test(host);
  const who = loopback ? `only this machine can call ${address}` : `anyone who reaches ${address} can call it`;
  const names = hosts === undefined || hosts === '*' ? 'by any Host name (SERVICE_ALLOWED_HOSTS=*)' : `by the Host names ${hosts.join(', ')} (SERVICE_ALLOWED_HOSTS)`;
  return `${setting}: no authentication; ${who}, ${names}${pages ? `, ${pages} (SERVICE_CORS_ORIGINS)` : ''}`;
}

/** Wires SIGTERM and SIGINT to the ordered graceful shutdown of a process's server. */
export function shutdownOnSignals(
  composition: Composition,
  server: { server: Server; lifecycle: Lifecycle },
  options: { delayMs: number; timeoutMs: number; endStreams?: () => void; closeFirst?: () => Promise<void> },
): void {
  const logger: Logger = composition.logger;
  onTerminationSignals(
    createShutdown({
      server: server.server,
      lifecycle: server.lifecycle,
      logger,
      delayMs: options.delayMs,
      timeoutMs: options.timeoutMs,
      endStreams: options.endStreams,
      close: async () => {
        await options.closeFirst?.();
        await composition.close();
        // Last: the spans of the drain itself are exported too.
        await stopTracing();
      },
    }),
  );
}
