import { z } from 'zod';
import type { AppDeps } from '../deps.js';
import type { AnyRoute } from '../route.js';
import { defineLangGraphRoute } from './define.js';

export interface LangGraphMetaOptions {
  /** agentplane's version, answered as the server's. */
  version: string;
}

const InfoSchema = z
  .object({
    version: z.string().meta({ description: "agentplane's version" }),
    context: z.literal('js').meta({ description: 'the graphs are LangGraph.js graphs' }),
    flags: z.object({
      assistants: z.literal(true).meta({ description: 'assistants are served (every configured agent and graph)' }),
      crons: z.boolean().meta({ description: 'crons are served (SERVICE_SCHEDULES)' }),
      langsmith: z.literal(false).meta({ description: 'no LangSmith tracing (traces are agentplane spans)' }),
    }),
  })
  .meta({ id: 'LangGraphInfo' });

/**
 * `GET /ok` and `GET /info` as the LangGraph server answers them (what LangGraph clients and
 * Studio probe): public, like the probes, since they tell nothing about a tenant.
 */
export function langgraphMetaRoutes(deps: Pick<AppDeps, 'config'>, options: LangGraphMetaOptions): AnyRoute[] {
  const info = { version: options.version, context: 'js', flags: { assistants: true, crons: deps.config.SERVICE_SCHEDULES, langsmith: false } };
  return [
    defineLangGraphRoute({
      method: 'GET',
      path: '/ok',
      operationId: 'langgraphOk',
      summary: 'LangGraph server health: the process is up',
      public: true,
      responses: { 200: { description: 'The process is up', schema: z.object({ ok: z.literal(true) }) } },
      handler: async () => ({ status: 200, body: { ok: true } }),
    }),
    defineLangGraphRoute({
      method: 'GET',
      path: '/info',
      operationId: 'langgraphInfo',
      summary: 'LangGraph server information: version and the features served',
      public: true,
      responses: { 200: { description: 'Version and feature flags', schema: InfoSchema } },
      handler: async () => ({ status: 200, body: info }),
    }),
  ];
}
