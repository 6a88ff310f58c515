import { DEFAULT_TIMEZONE, nextRunAfter, validateCron, validateTimezone } from '../domain/cron.js';
import { AppError, notFound } from '../domain/errors.js';
import { newId, nowIso } from '../domain/time.js';
import type { Logger } from 'pino';
import type { JsonObject, Schedule } from '../domain/types.js';
import type { ScheduleTrigger, Scheduler } from '../ports/scheduler.js';
import type { Store } from '../ports/store.js';
import type { AgentRegistry } from './registry.js';

export interface NewScheduleRequest {
  agent_id: string;
  cron_expr: string;
  /** @defaultValue `{}` */
  input?: JsonObject;
  /** A fresh session per fire, or one session reused by every fire. @defaultValue true */
  new_session?: boolean;
  /** IANA time zone the expression is read in. @defaultValue UTC */
  timezone?: string;
}

/** Creating and deleting schedules: the stored schedule and its trigger, kept together. */
export interface ScheduleControl {
  /** Throws `unknown_agent`, `bad_request` (time zone) or `invalid_cron`; nothing is stored then. */
  create(tenant: string, request: NewScheduleRequest): Promise<Schedule>;
  /** Throws `not_found` for a schedule missing from the tenant. */
  remove(tenant: string, id: string): Promise<void>;
}

export interface ScheduleControlOptions {
  store: Pick<Store, 'schedules'>;
  scheduler: Scheduler;
  agents: AgentRegistry;
}

/** The trigger that fires a stored schedule. */
export function triggerOf(tenant: string, schedule: Schedule): ScheduleTrigger {
  return { schedule_id: schedule.id, tenant, cron_expr: schedule.cron_expr, timezone: schedule.timezone };
}

/**
 * The schedule is stored before its trigger exists and deleted before its trigger goes, so a
 * crash between the two writes leaves either a schedule without a trigger or a trigger without
 * a schedule; worker-start reconciliation ({@link reconcileSchedules}) heals both.
 */
export function createScheduleControl(options: ScheduleControlOptions): ScheduleControl {
  const { store, scheduler, agents } = options;
  return {
    async create(tenant, request) {
      if (!agents.get(request.agent_id)) throw new AppError('unknown_agent', `Agent "${request.agent_id}" is not registered.`);
      const timezone = validateTimezone(request.timezone ?? DEFAULT_TIMEZONE);
      const cron = validateCron(request.cron_expr, timezone);
      const now = Date.now();
      const newSession = request.new_session ?? true;
      const schedule: Schedule = {
        id: newId(),
        agent_id: request.agent_id,
        cron_expr: cron,
        input: request.input ?? {},
        new_session: newSession,
        timezone,
        next_run: nextRunAfter(cron, timezone, now),
        created_at: nowIso(() => now),
        ...(newSession ? {} : { session_id: newId() }),
      };
      await store.schedules.createSchedule(tenant, schedule);
      try {
        await scheduler.upsert(triggerOf(tenant, schedule));
      } catch (error) {
        // Answering an error while the schedule stays stored would let it fire after the next
        // reconciliation; take it back (if this fails too, reconciliation restores consistency).
        await store.schedules.deleteSchedule(tenant, schedule.id).catch(() => {});
        throw new AppError('unavailable', 'The schedule could not be registered with the scheduler.', { cause: error });
      }
      return schedule;
    },

    async remove(tenant, id) {
      if (!(await store.schedules.deleteSchedule(tenant, id))) throw notFound('The schedule');
      await scheduler.remove(id);
    },
  };
}

/** What a reconciliation changed. */
export interface ReconcileReport {
  schedules: number;
  upserted: number;
  removed: number;
  /** Triggers that could not be upserted or removed this time (see `errors`); retry later. */
  failed: number;
  errors: unknown[];
}

/**
 * Makes the triggers match the stored schedules: a schedule without its trigger (or with one of
 * another cadence) gets it; a trigger without a schedule is removed. Triggers that already
 * match are left alone, so a pending late tick keeps its place. One trigger that fails does not
 * stop the others; the report counts it.
 */
export async function reconcileSchedules(store: Pick<Store, 'schedules'>, scheduler: Scheduler): Promise<ReconcileReport> {
  // Triggers first: a schedule created in between is then seen stored without its trigger
  // (upserted again, harmlessly), never as a trigger without its schedule (removed).
  const triggers = new Map((await scheduler.list()).map((t) => [t.schedule_id, t]));
  const stored = await store.schedules.listAllSchedules();
  const report: ReconcileReport = { schedules: stored.length, upserted: 0, removed: 0, failed: 0, errors: [] };
  const attempt = async (change: () => Promise<void>, counter: 'upserted' | 'removed') => {
    try {
      await change();
      report[counter] += 1;
    } catch (error) {
      report.failed += 1;
      report.errors.push(error);
    }
  };
  for (const { tenant, schedule } of stored) {
    const wanted = triggerOf(tenant, schedule);
    const existing = triggers.get(schedule.id);
    triggers.delete(schedule.id);
    if (!existing || !sameTrigger(existing, wanted)) await attempt(() => scheduler.upsert(wanted), 'upserted');
  }
  for (const orphan of triggers.keys()) await attempt(() => scheduler.remove(orphan), 'removed');
  return report;
}

function sameTrigger(a: ScheduleTrigger, b: ScheduleTrigger): boolean {
  return a.tenant === b.tenant && a.cron_expr === b.cron_expr && a.timezone === b.timezone;
}

/** Longest pause between two reconciliation attempts. */
const RECONCILE_MAX_DELAY_MS = 30_000;

/**
 * Reconciles the triggers with the stored schedules now and, until one attempt completes
 * without a failed trigger, again after a doubling delay (1 s … 30 s): a crash between storing
 * a schedule and writing its trigger heals at the next worker start, a Redis outage at start
 * only delays it. Returns the function that stops retrying.
 */
export function startReconciling(store: Pick<Store, 'schedules'>, scheduler: Scheduler, logger: Logger): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const attempt = (n: number): void => {
    const retry = (err: unknown) => {
      if (stopped) return;
      const retryInMs = Math.min(1000 * 2 ** n, RECONCILE_MAX_DELAY_MS);
      logger.error({ err, retryInMs }, 'schedule reconciliation incomplete');
      timer = setTimeout(() => attempt(n + 1), retryInMs);
      timer.unref();
    };
    reconcileSchedules(store, scheduler).then(({ errors, ...report }) => {
      logger.info(report, 'schedules reconciled');
      if (errors.length > 0) retry(errors[0]);
    }, retry);
  };
  attempt(0);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
