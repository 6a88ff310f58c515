import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { AssistantStore } from '../ports/assistant-store.js';
import type { GraphItemStore } from '../ports/graph-storage.js';
import type { RunControl } from '../ports/run-control.js';
import type { Store } from '../ports/store.js';
import type { GraphThreads } from '../ports/graph-threads.js';
import type { RunWebhooks } from '../runtime/run-webhooks.js';
import type { AgentRegistry } from '../runtime/registry.js';
import type { ScheduleControl } from '../runtime/schedule-control.js';

/**
 * What the services of the LangGraph Server API use: the run and schedule controls for every
 * change of a run or a cron, the store ports for reads and for what only LangGraph does (a
 * thread's edits, a rolled-back run's deletion), the agents and their graph engine. The
 * composition root's deps (the HTTP layer's AppDeps) hold all of it; each service picks what
 * it needs.
 */
export interface LangGraphDeps {
  store: Store;
  runs: RunControl;
  schedules: ScheduleControl;
  agents: AgentRegistry;
  /** LangGraph cross-thread memory items per tenant (the /store of the API). */
  graphItems: GraphItemStore;
  /** LangGraph assistants stored per tenant (besides each graph's default, derived). */
  assistants: AssistantStore;
  /** The engine of graph agents (LangGraph), when the registry has any. */
  graphs?: GraphThreads;
  /** Run webhooks: a stateless run's thread goes only once its run's delivery is queued. */
  webhooks: Pick<RunWebhooks, 'queued'>;
  config: Pick<Config, 'SERVICE_MAX_PAGE_BYTES' | 'fairShare'>;
  logger: Pick<Logger, 'warn'>;
}
