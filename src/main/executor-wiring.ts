import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Metrics } from '../http/metrics.js';
import { createExecutor } from '../runtime/executor.js';
import type { AgentRegistry } from '../runtime/registry.js';
import type { Backend } from './backend.js';

/** Starts executing run jobs from the backend's queue in this process, with metrics. */
export function startExecuting(config: Config, backend: Backend, agents: AgentRegistry, logger: Logger, metrics: Metrics): void {
  const execute = createExecutor({
    store: backend.store,
    events: backend.events,
    agents,
    logger,
    stepLimit: config.RUN_STEP_LIMIT,
    onRunStatus: (run) => metrics.runs.inc({ agent_id: run.agent_id, status: run.status }),
    onEvent: (event) => metrics.eventsPublished.inc({ type: event.type }),
  });
  backend.consumer().start(async (job) => {
    logger.info({ run_id: job.run_id, kind: job.kind, session_id: job.session_id }, 'run job started');
    try {
      await execute(job);
    } catch (error) {
      logger.error({ err: error, run_id: job.run_id }, 'run job failed; the queue retries it');
      throw error;
    }
  });
}
