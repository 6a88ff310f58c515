import { onTestFinished } from 'vitest';
import { loadChatConfig } from '../../src/integrations/gateway/config.js';
import type { Middleware } from 'koa';
import { startConfiguredGateway } from '../../src/main/chat-gateway.js';
import type { AgentRegistry } from '../../src/runtime/registry.js';
import { chatAgents } from '../fixtures/chat-agents.js';
import { startTestApi, type TestApi } from './app.js';
import { uniquePrefix } from './redis.js';

/** API replicas serving the chat gateway of `env`, and what executes their runs. */
export interface GatewayStack {
  /** One replica embedded; two on Redis (a worker in this process executes the runs). */
  replicas: TestApi[];
}

/**
 * The chat gateway as `npm start` serves it (src/main/chat-gateway.ts), with `agents` (the test
 * agents of test/fixtures/chat-agents.ts unless given): without `redisUrl` one embedded API;
 * with it two API replicas on one key prefix and a third composition in this process executing
 * runs, as a worker does. Everything is closed when the test ends. Call inside a test.
 */
export async function startGatewayStack(env: Record<string, string>, redisUrl?: string, agents: () => AgentRegistry = chatAgents): Promise<GatewayStack> {
  const prefix = uniquePrefix('chat');
  const config = loadChatConfig(env);
  const start = async (gateway: boolean): Promise<TestApi> => {
    // startTestApi composes and serves at once: the endpoint forwards to the gateway started on its composition.
    let endpoints: Middleware | undefined;
    const forward: Middleware = (ctx, next) => (endpoints ? endpoints(ctx, next) : next());
    const app = await startTestApi({ agents: agents(), env: { SERVICE_KEY_PREFIX: prefix }, app: { endpoints: [forward] }, ...(redisUrl ? { redisUrl } : {}) });
    onTestFinished(() => app.close());
    if (gateway) {
      const started = await startConfiguredGateway(app.composition, config);
      // Hooks run newest first: the gateway stops before its replica closes.
      onTestFinished(() => started?.close());
      endpoints = started?.middleware();
    }
    return app;
  };
  const replicas = redisUrl ? [await start(true), await start(true)] : [await start(true)];
  if (redisUrl) (await start(false)).composition.startExecuting();
  return { replicas };
}
