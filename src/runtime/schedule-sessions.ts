import type { Logger } from 'pino';
import { isAppError } from '../domain/errors.js';
import { SCHEDULE_HISTORY_LIMIT, TERMINAL_RUN_STATUSES, type Run, type RunStatus, type Schedule } from '../domain/types.js';
import type { Store } from '../ports/store.js';

/** The error of a paused run cancelled because its fire's session goes once the run stops. */
export const DISCARDED_PAUSE_ERROR = 'cancelled: its schedule deletes the session once its run stops (on_run_completed: delete)';

export interface FireSessionsOptions {
  store: Pick<Store, 'sessions' | 'schedules'>;
  /**
   * Ends a paused run (RunLifecycle.end, typed here by what this module asks of it: the
   * lifecycle imports the schedule fires, which use this module); its end settles the record
   * again, and the session goes then.
   */
  end(tenant: string, runId: string, end: { status: 'cancelled'; error: string; from: readonly RunStatus[] }): Promise<unknown>;
  /** Resolves once the run's webhook delivery (if any) is enqueued: it reads the session. */
  webhookEnqueued(runId: string): Promise<void>;
  logger: Logger;
}

/**
 * What becomes of the new session of a schedule's fire (a stateless LangGraph cron's thread)
 * once its run stops, per the schedule's `on_run_completed`:
 * - `delete`: when the run ends (completed, failed, cancelled) the session is deleted, after
 *   its webhook was enqueued; a run paused at an interrupt is cancelled first (nobody holds its
 *   thread: LangGraph's server deletes a stateless run's thread however the run stopped).
 * - `keep`: the session stays while the schedule's history lists its fire; the fire that pushes
 *   a record out of the history (the last SCHEDULE_HISTORY_LIMIT) deletes that record's session.
 * A schedule without the field (a native one's new sessions) keeps them. Never throws: a
 * session that cannot go now (another run on it) is left, logged, to expire as any session does.
 */
export interface FireSessions {
  /** A run of a fire of `scheduleId` settled its record (ScheduleStore.settleScheduleRun). */
  settled(tenant: string, run: Pick<Run, 'id' | 'status' | 'session_id'>, scheduleId: string): Promise<void>;
  /**
   * Before a fire of a schedule that keeps its sessions begins: the sessions of the records it
   * will push out of the history. Call {@link forget} with them once the fire is recorded.
   */
  leaving(tenant: string, schedule: Schedule): Promise<string[]>;
  /** Deletes the sessions of fires no longer in the history. */
  forget(tenant: string, sessionIds: readonly string[]): Promise<void>;
}

export function createFireSessions(options: FireSessionsOptions): FireSessions {
  const { store, logger } = options;

  const remove = async (tenant: string, sessionId: string, why: string): Promise<void> => {
    try {
      await store.sessions.deleteSession(tenant, sessionId);
    } catch (error) {
      if (isAppError(error) && error.code === 'not_found') return;
      logger.warn({ err: error, tenant, session_id: sessionId }, `the session of a schedule fire was not deleted (${why})`);
    }
  };

  return {
    async settled(tenant, run, scheduleId) {
      try {
        const schedule = await store.schedules.getSchedule(tenant, scheduleId);
        if (!schedule?.new_session || schedule.on_run_completed !== 'delete') return;
        if (run.status === 'interrupted') {
          await options.end(tenant, run.id, { status: 'cancelled', error: DISCARDED_PAUSE_ERROR, from: ['interrupted'] });
          return;
        }
        if (!TERMINAL_RUN_STATUSES.includes(run.status)) return;
        await options.webhookEnqueued(run.id);
        await remove(tenant, run.session_id, 'on_run_completed: delete');
      } catch (error) {
        logger.warn({ err: error, tenant, run_id: run.id, schedule_id: scheduleId }, 'the session of a schedule fire was not deleted');
      }
    },

    async leaving(tenant, schedule) {
      if (!schedule.new_session || schedule.on_run_completed !== 'keep') return [];
      const history = await store.schedules.listScheduleHistory(tenant, schedule.id);
      return history.slice(SCHEDULE_HISTORY_LIMIT - 1).map((record) => record.session_id);
    },

    async forget(tenant, sessionIds) {
      for (const id of sessionIds) await remove(tenant, id, 'its fire left the history');
    },
  };
}
