import { Command } from 'commander';
import { integer } from '../parse.js';

// The server programs (and the configuration reader) are imported when their command runs:
// the client commands then load neither Koa, zod nor the Redis clients, and the entry modules
// stay the ones `npm start` runs.

/** Overrides of the environment by a server command's options. */
function environment(overrides: { port?: number; withoutRedis?: boolean; langgraphConfig?: string }): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (overrides.withoutRedis) {
    for (const name of ['REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_SENTINELS']) delete env[name];
  }
  if (overrides.port !== undefined) env.SERVICE_PORT = String(overrides.port);
  if (overrides.langgraphConfig !== undefined) env.SERVICE_LANGGRAPH_JSON = overrides.langgraphConfig;
  return env;
}

/** `agentplane dev|api|worker|webhooks`: the processes of agentplane, configured by the environment (README). */
export function serverCommands(): Command[] {
  const dev = new Command('dev')
    .description('everything in one process on in-memory storage (ignores REDIS_URL and the other Redis settings): http://localhost:8420')
    .option('--port <port>', 'listen port (SERVICE_PORT)', integer(0, 65535))
    .option('--config <file>', 'serve the graphs of a langgraph.json beside the agents (SERVICE_LANGGRAPH_JSON)')
    .option('--watch', 'reload the agents of AGENTS_MODULE when its files change (the sessions stay; LangGraph graphs are not reloaded)')
    .action(async (options: { port?: number; config?: string; watch?: boolean }) => {
      const [{ runApi }, { loadConfigOrExit }] = await Promise.all([import('../../main/api.js'), import('../../config.js')]);
      const env = environment({ port: options.port, withoutRedis: true, langgraphConfig: options.config });
      await runApi(loadConfigOrExit(env), { watch: options.watch });
    });

  const api = new Command('api')
    .description('an API replica on REDIS_URL (embedded, as dev, when it is unset)')
    .option('--port <port>', 'listen port (SERVICE_PORT)', integer(0, 65535))
    .action(async (options: { port?: number }) => {
      const [{ runApi }, { loadConfigOrExit }] = await Promise.all([import('../../main/api.js'), import('../../config.js')]);
      await runApi(loadConfigOrExit(environment({ port: options.port })));
    });

  const worker = new Command('worker')
    .description('a worker: executes runs and fires schedules from REDIS_URL')
    .action(async () => {
      await import('../../main/worker.js');
    });

  const webhooks = new Command('webhooks')
    .description('the webhook receiver (WEBHOOK_* settings), starting runs on REDIS_URL')
    .action(async () => {
      await import('../../main/webhooks.js');
    });

  return [dev, api, worker, webhooks];
}
