import { Writable } from 'node:stream';
import { loadConfig, type Config } from '../../src/config.js';
import type { AppOptions } from '../../src/http/app.js';
import { anonymous } from '../../src/http/middleware/authenticate.js';
import { builtInAgents } from '../../src/agents/index.js';
import { createApiServer, type ApiServer } from '../../src/main/api-server.js';
import { compose, type Composition } from '../../src/main/compose.js';
import { graphEngineFor } from '../../src/main/graphs.js';
import { createLogger } from '../../src/main/logger.js';
import { securityOptions } from '../../src/main/security.js';
import type { Backend } from '../../src/ports/backend.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { uniquePrefix } from './redis.js';

export interface TestApi {
  url: string;
  config: Config;
  backend: Backend;
  composition: Composition;
  api: ApiServer;
  /** Every log line the app wrote, as parsed JSON. */
  logs: Record<string, unknown>[];
  close(): Promise<void>;
}

export interface TestApiOptions {
  /** Redis URL; omitted → the in-memory backend. */
  redisUrl?: string;
  env?: Record<string, string>;
  app?: Partial<AppOptions>;
  agents?: AgentRegistry;
  /**
   * Assemble authentication, RBAC and limits from the env exactly as `runApi` does, instead of
   * the anonymous caller. @defaultValue false
   */
  secured?: boolean;
  /** Also collects every raw log line (secret-leak assertions read the text). */
  rawLogs?: string[];
}

/** An API app in this process on a free loopback port, on Redis (unique prefix) or memory. */
export async function startTestApi(options: TestApiOptions = {}): Promise<TestApi> {
  const config = loadConfig({
    SERVICE_HOST: '127.0.0.1',
    SERVICE_PORT: '0',
    SERVICE_KEY_PREFIX: uniquePrefix(),
    LOG_LEVEL: 'info',
    ...(options.redisUrl ? { REDIS_URL: options.redisUrl } : {}),
    ...options.env,
  });
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      const text = chunk.toString('utf8');
      options.rawLogs?.push(text);
      for (const line of text.split('\n')) if (line.trim()) logs.push(JSON.parse(line));
      callback();
    },
  });
  const agents = options.agents ?? new AgentRegistry(builtInAgents);
  const composition = compose(config, {
    logger: createLogger(config.LOG_LEVEL, sink),
    agents,
    httpApp: options.app?.httpApp,
    graphEngine: await graphEngineFor(agents),
  });
  const { backend } = composition;
  const api = createApiServer(
    composition,
    options.secured ? { ...securityOptions(config, backend.limiters), ...options.app } : { authenticate: anonymous, ...options.app },
  );
  const url = await api.listen();
  return {
    url,
    config,
    backend,
    composition,
    api,
    logs,
    close: async () => {
      api.server.closeAllConnections();
      await new Promise<void>((resolve) => api.server.close(() => resolve()));
      await composition.close();
    },
  };
}

/** fetch + JSON body; the body is undefined when the response is not JSON. */
export async function call(
  url: string,
  init: RequestInit & { json?: unknown } = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const { json, ...rest } = init;
  const response = await fetch(url, {
    ...rest,
    ...(json !== undefined
      ? { body: JSON.stringify(json), headers: { 'Content-Type': 'application/json', ...(rest.headers as Record<string, string>) } }
      : {}),
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  return { status: response.status, headers: response.headers, body };
}
