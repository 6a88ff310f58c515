import type { Logger } from 'pino';
import { clip, MAX_ERROR_CHARS } from '../domain/types.js';
import type { RunHandler, RunJob } from '../ports/run-queue.js';
import type { Execute } from './run/run-driver.js';
import type { RunLifecycle } from './run-lifecycle.js';

export interface RunJobHandlerOptions {
  execute: Execute;
  lifecycle: RunLifecycle;
  logger: Logger;
}

/**
 * What a worker does with run jobs. `handle` executes one; a failure the executor could not
 * record (Redis unreachable) is logged and rethrown, so the queue retries the job. `failed`
 * hears of a job the queue gave up on (retries exhausted, too many stalls): its run, if still
 * queued or running, ends `failed` with the reason, so no run stays `running` without a job.
 */
export function createRunJobHandler(options: RunJobHandlerOptions): { handle: RunHandler; failed: (job: RunJob, error: Error) => void } {
  const { execute, lifecycle, logger } = options;
  return {
    async handle(job) {
      logger.info({ run_id: job.run_id, kind: job.kind, session_id: job.session_id }, 'run job started');
      try {
        const run = await execute(job);
        if (run) logger.info({ run_id: run.id, agent_id: run.agent_id, status: run.status, error: run.error }, 'run job ended');
        else logger.info({ run_id: job.run_id }, 'run job dropped: its run is gone or ended');
      } catch (error) {
        logger.error({ err: error, run_id: job.run_id }, 'run job failed; the queue retries it');
        throw error;
      }
    },
    failed(job, error) {
      const reason = clip(`The run's job failed for good: ${error.message}`, MAX_ERROR_CHARS);
      lifecycle
        .end(job.tenant, job.run_id, { status: 'failed', error: reason, from: ['queued', 'running'] })
        .then((run) => {
          if (run) logger.warn({ run_id: run.id, tenant: job.tenant, error: reason }, 'run ended: the queue gave up on its job');
        })
        .catch((err: unknown) => logger.warn({ err, run_id: job.run_id }, 'could not end the run of a failed job; the reaper will'));
    },
  };
}
