import type { Run, Schedule, ScheduleFireStatus, ScheduleHistoryRecord } from '../domain/types.js';
import type { Page } from './paging.js';

/* Schedules and their fires. */

/** The start of a fire: its record begins as `running` and the schedule's next_run moves on. */
export interface NewScheduleFire {
  /** Unique per schedule and tick (the due time in ms). */
  fire_id: string;
  session_id: string;
  fired_at: string;
  due_at: string;
  next_run: string;
}

export interface ScheduleFireUpdate {
  status?: ScheduleFireStatus;
  /** Links the run to the record, so its end settles the record ({@link ScheduleStore.settleScheduleRun}). */
  run_id?: string;
  error?: string;
}

/**
 * A change of a schedule: each field given replaces the stored one; `end_time: null` removes
 * it. Its id, agent, sessions and `created_at` never change.
 */
export type SchedulePatch = Partial<
  Pick<Schedule, 'cron_expr' | 'timezone' | 'next_run' | 'input' | 'enabled' | 'graph' | 'multitask' | 'metadata' | 'webhook' | 'updated_at' | 'on_run_completed'>
> & { end_time?: string | null };

/** A stored schedule with its tenant (reconciliation reads them across tenants). */
export interface TenantSchedule {
  tenant: string;
  schedule: Schedule;
}

/**
 * Schedules and their fire history. A record's `completed` or `failed` is final; history is
 * newest first and capped at SCHEDULE_HISTORY_LIMIT (domain/types.ts) per schedule.
 */
export interface ScheduleStore {
  /**
   * Stores a new schedule. With `limit`, a tenant that already holds that many schedules is
   * refused with `conflict` (domain/schedule-cap.ts), atomically: nothing is stored then.
   */
  createSchedule(tenant: string, schedule: Schedule, limit?: number): Promise<void>;
  getSchedule(tenant: string, id: string): Promise<Schedule | null>;
  /** Newest `created_at` first, ties by id. */
  listSchedules(tenant: string, page: Page): Promise<Schedule[]>;
  /** Applies the patch atomically and answers the schedule as it is then; null when it does not exist in the tenant. */
  updateSchedule(tenant: string, id: string, patch: SchedulePatch): Promise<Schedule | null>;
  /** Removes the schedule with its history; false when it does not exist in the tenant. */
  deleteSchedule(tenant: string, id: string): Promise<boolean>;
  /** Every schedule of every tenant. */
  listAllSchedules(): Promise<TenantSchedule[]>;
  /**
   * Atomically records a fire as `running` (dropping the oldest record past the cap) and sets
   * the schedule's `next_run`. `gone` when the schedule no longer exists, `duplicate` when
   * this fire_id was already recorded (a re-delivered tick): nothing changes then.
   */
  beginScheduleFire(tenant: string, scheduleId: string, fire: NewScheduleFire): Promise<'begun' | 'duplicate' | 'gone'>;
  /** Updates a record; a missing record, or one already final, is left alone. */
  updateScheduleFire(tenant: string, scheduleId: string, fireId: string, update: ScheduleFireUpdate): Promise<void>;
  /**
   * Settles the record a run was linked to with the run's status (when it is one of
   * SETTLING_RUN_STATUSES) and answers the record's schedule id; null when no record is linked
   * or the status settles nothing.
   */
  settleScheduleRun(tenant: string, run: Pick<Run, 'id' | 'status' | 'error'>): Promise<string | null>;
  /** Newest first; throws nothing for a missing schedule (empty list). */
  listScheduleHistory(tenant: string, scheduleId: string): Promise<ScheduleHistoryRecord[]>;
}
