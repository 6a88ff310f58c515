import type { Logger } from 'pino';
import { AppError, tryExpected } from '../domain/errors.js';
import { TIMEOUT_DECIDER, TIMEOUT_ERROR } from '../domain/types.js';
import type { RunControl } from '../ports/run-control.js';
import type { DueTimer, Store } from '../ports/store.js';
import type { RunLifecycle } from './run-lifecycle.js';

/** Timers handled per store read; a sweep reads again while a batch comes back full. */
const BATCH = 200;

export interface RunTimersOptions {
  store: Pick<Store, 'timers' | 'runs' | 'approvals'>;
  runs: RunControl;
  lifecycle: RunLifecycle;
  logger: Logger;
  /** @defaultValue Date.now */
  clock?: () => number;
}

/**
 * Acts on due timers: a run past its deadline is cancelled with `error: "timeout"`; an
 * approval past its `expires_at` is decided by the system (`decided_by: "timeout"`, event
 * `approval_decided` with `by: "timeout"`) as its `on_timeout` says: approve or reject (the run
 * resumes with that answer), or fail the run. Every action is a conditional atomic change, so
 * sweepers on several workers decide each timer once; a human answer that came first wins.
 */
export function createRunTimers(options: RunTimersOptions): { sweep(): Promise<number> } {
  const { store, runs, lifecycle, logger } = options;
  const clock = options.clock ?? Date.now;

  const act = async (timer: DueTimer): Promise<void> => {
    if (timer.kind === 'run') {
      const run = await lifecycle.end(timer.tenant, timer.id, { status: 'cancelled', error: TIMEOUT_ERROR, by: TIMEOUT_DECIDER }).catch(ignoreMissing);
      if (run) logger.info({ run_id: run.id, tenant: timer.tenant }, 'run cancelled: its deadline passed');
      return;
    }
    const approval = await store.approvals.getApproval(timer.tenant, timer.id);
    if (approval?.status !== 'pending') return;
    if (approval.on_timeout === 'fail') {
      const run = await lifecycle.end(timer.tenant, approval.run_id, {
        status: 'failed',
        error: `The approval request ${approval.id} expired unanswered.`,
        from: ['interrupted'],
        by: TIMEOUT_DECIDER,
        announce: { type: 'approval_decided', approval_id: approval.id, approved: false, by: TIMEOUT_DECIDER },
      });
      if (run) logger.info({ approval_id: approval.id, run_id: run.id }, 'approval expired: its run failed');
      return;
    }
    const approved = approval.on_timeout === 'approve';
    // Decided, or gone, meanwhile: nothing to do.
    const decided = await tryExpected(runs.answerApproval(timer.tenant, approval.id, { approved, comment: 'expired', decided_by: TIMEOUT_DECIDER }), 'conflict', 'not_found');
    if (decided.ok) logger.info({ approval_id: approval.id, approved }, 'approval expired: decided by timeout');
  };

  return {
    /** Handles every timer due now; resolves with how many were due. */
    async sweep(): Promise<number> {
      let handled = 0;
      for (;;) {
        const due = await store.timers.due(clock(), BATCH);
        for (const timer of due) {
          try {
            await act(timer);
            await store.timers.clear(timer);
          } catch (err) {
            // Left in place: the next sweep tries again.
            logger.warn({ err, timer }, 'timer not handled; retrying at the next sweep');
          }
        }
        handled += due.length;
        if (due.length < BATCH) return handled;
      }
    },
  };
}

function ignoreMissing(error: unknown): null {
  if (error instanceof AppError && error.code === 'not_found') return null;
  throw error;
}
