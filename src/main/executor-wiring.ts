import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Metrics } from '../http/metrics.js';
import { createExecutor } from '../runtime/executor.js';
import type { AgentRegistry } from '../runtime/registry.js';
import { createRunControl } from '../runtime/run-control.js';
import { reconcileSchedules } from '../runtime/schedule-control.js';
import { createScheduleFirer } from '../runtime/schedule-fire.js';
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
      // A run started by a schedule fire settles that fire's history record when it ends.
      const run = await backend.store.getRun(job.tenant, job.run_id);
      if (run) await backend.store.settleScheduleRun(job.tenant, run);
    } catch (error) {
      logger.error({ err: error, run_id: job.run_id }, 'run job failed; the queue retries it');
      throw error;
    }
  });
}

/**
 * Fires schedules in this process unless SERVICE_SCHEDULES is false: consumes the ticks and,
 * at start, reconciles the triggers with the stored schedules (retried until it succeeds), so
 * a crash between storing a schedule and writing its trigger heals at the next worker start.
 */
export function startScheduling(config: Config, backend: Backend, agents: AgentRegistry, logger: Logger, metrics: Metrics): void {
  if (!config.SERVICE_SCHEDULES) return;
  const { store, queue, events, scheduler } = backend;
  const runControl = createRunControl({ store, queue, events, agents });
  const onFire = (status: string) => metrics.scheduleFires.inc({ status });
  backend.scheduleConsumer().start(createScheduleFirer({ store, scheduler, runControl, logger, onFire }));
  const reconcile = (attempt: number): void => {
    const retry = (err: unknown) => {
      const retryInMs = Math.min(1000 * 2 ** attempt, 30_000);
      logger.error({ err, retryInMs }, 'schedule reconciliation incomplete');
      setTimeout(() => reconcile(attempt + 1), retryInMs).unref();
    };
    reconcileSchedules(store, scheduler).then(({ errors, ...report }) => {
      logger.info(report, 'schedules reconciled');
      if (errors.length > 0) retry(errors[0]);
    }, retry);
  };
  reconcile(0);
}
