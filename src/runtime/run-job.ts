import type { Logger } from 'pino';
import type { RunHandler } from '../ports/run-queue.js';
import type { Store } from '../ports/store.js';
import type { Execute } from './executor.js';
import { settleScheduledRun } from './schedule-fire.js';

export interface RunJobHandlerOptions {
  execute: Execute;
  store: Pick<Store, 'schedules'>;
  logger: Logger;
}

/**
 * What a worker does with a run job: executes it, then settles the fire record of a run a
 * schedule started (from the run the executor ended with: no second read). A failure the
 * executor could not record is logged and rethrown, so the queue retries the job.
 */
export function createRunJobHandler(options: RunJobHandlerOptions): RunHandler {
  const { execute, store, logger } = options;
  return async (job) => {
    logger.info({ run_id: job.run_id, kind: job.kind, session_id: job.session_id }, 'run job started');
    try {
      const run = await execute(job);
      if (run) await settleScheduledRun(store, job.tenant, run);
    } catch (error) {
      logger.error({ err: error, run_id: job.run_id }, 'run job failed; the queue retries it');
      throw error;
    }
  };
}
