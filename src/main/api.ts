import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { exitOnConfigError, type Config } from '../config.js';
import { watchAgents } from '../runtime/agents-watch.js';
import { createApiServer } from './api-server.js';
import { loadChatConfig } from '../integrations/gateway/config.js';
import { startConfiguredGateway } from './chat-gateway.js';
import { corsPolicy, langgraphJsonCors } from '../http/cors.js';
import { allowedHosts } from '../http/local-guard.js';
import { bindLangGraphClient, bootProcess, corsReach, exitOnStartupError, listenOrExit, listeningAt, openAccessLine, shutdownOnSignals, uiBundlesOf } from './process.js';
import { securityOptions } from './security.js';

/**
 * `npm start`: one API replica on Redis with REDIS_URL; without it the embedded default, one
 * process on the in-memory adapters serving http://localhost:8420 with the web and Swagger consoles.
 * With `watch` (`agentplane dev --watch`), a change to the agents module's files reloads its
 * agents in this process.
 */
export async function runApi(config?: Config, options: { watch?: boolean } = {}): Promise<void> {
  // The chat gateway's settings (SLACK_*, DISCORD_*, TELEGRAM_*): a bad one stops the process before it boots.
  const chat = exitOnConfigError(() => loadChatConfig(process.env));
  const composition = await bootProcess({ config, role: 'api' });
  const { logger } = composition;
  const uiBundles = await exitOnStartupError(() => uiBundlesOf(composition.config));
  const gateway = await exitOnStartupError(() => startConfiguredGateway(composition, chat));
  const endpoints = gateway ? [gateway.middleware()] : [];
  const api = exitOnConfigError(() => createApiServer(composition, { ...securityOptions(composition.config, composition.backend.limiters), uiBundles, endpoints }));
  const { SERVICE_HOST: host, SERVICE_PORT: port } = composition.config;
  await listenOrExit({ host: 'SERVICE_HOST', port: 'SERVICE_PORT' }, { host, port }, () => api.listen());
  const { address, url } = listeningAt(api.server, host);
  bindLangGraphClient(url);
  const swagger = composition.config.SERVICE_SWAGGER ? `${url}/swagger/` : undefined;
  const webConsole = composition.config.SERVICE_CONSOLE ? `${url}/console/` : undefined;
  const chatExample = composition.config.SERVICE_EXAMPLES ? `${url}/examples/chat/` : undefined;
  logger.info({ address, url, mode: composition.backend.mode, swagger, console: webConsole, chat_example: chatExample }, 'agentplane api listening');
  const { config: settings } = composition;
  if (settings.SERVICE_AUTH === 'none') {
    const cors = corsPolicy(settings.SERVICE_CORS_ORIGINS, settings.SERVICE_LANGGRAPH_JSON ? langgraphJsonCors(settings.SERVICE_LANGGRAPH_JSON) : undefined, true);
    logger.warn(openAccessLine('SERVICE_AUTH=none', address, allowedHosts(settings.SERVICE_ALLOWED_HOSTS, true), corsReach(cors)));
  }
  const modulePath = composition.config.AGENTS_MODULE;
  if (options.watch && !modulePath) logger.info('--watch: no AGENTS_MODULE, nothing to watch (the built-in agents)');
  const watch = options.watch && modulePath ? watchAgents({ modulePath, registry: composition.agents, logger }) : undefined;
  shutdownOnSignals(composition, api, {
    closeFirst: async () => {
      await watch?.close();
      await gateway?.close();
    },
    delayMs: composition.config.SERVICE_SHUTDOWN_DELAY_MS,
    timeoutMs: composition.config.SERVICE_SHUTDOWN_TIMEOUT_MS,
    endStreams: () => api.deps.streams.endAll(),
  });
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await runApi();
}
