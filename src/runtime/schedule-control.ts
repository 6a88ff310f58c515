import { DEFAULT_TIMEZONE, nextRunAfter, validateCron, validateTimezone } from '../domain/cron.js';
import { AppError, badRequest, notFound } from '../domain/errors.js';
import { webhookUrlProblem } from '../domain/run-webhook.js';
import { mergeMetadata, newMetadata } from '../domain/session-metadata.js';
import { newId, nowIso } from '../domain/time.js';
import type { Logger } from 'pino';
import type { JsonObject, Schedule } from '../domain/types.js';
import type { ScheduleTrigger, Scheduler } from '../ports/scheduler.js';
import type { SchedulePatch, Store } from '../ports/store.js';
import type { AgentRegistry } from './registry.js';

export interface NewScheduleRequest extends Partial<Pick<Schedule, 'enabled' | 'graph' | 'multitask' | 'metadata' | 'webhook' | 'on_run_completed'>> {
  agent_id: string;
  cron_expr: string;
  /** @defaultValue `{}` */
  input?: JsonObject;
  /** A fresh session per fire, or one session reused by every fire. @defaultValue true */
  new_session?: boolean;
  /** The session every fire reuses when `new_session` is false (a LangGraph thread). @defaultValue a new id */
  session_id?: string;
  /** IANA time zone the expression is read in. @defaultValue UTC */
  timezone?: string;
  /** No tick after this time (RFC 3339) fires. */
  end_time?: string;
}

/** A change of a schedule: the fields given replace the stored ones, `metadata` is merged. */
export interface ScheduleChange extends Partial<Pick<Schedule, 'cron_expr' | 'timezone' | 'input' | 'enabled' | 'graph' | 'webhook' | 'on_run_completed'>> {
  /** A time, or null to remove the schedule's end. */
  end_time?: string | null;
  /** Shallow-merged into the schedule's metadata; a key set to null is removed. */
  metadata?: JsonObject;
}

/** Creating, changing and deleting schedules: the stored schedule and its trigger, kept together. */
export interface ScheduleControl {
  /**
   * Throws `unknown_agent`, `bad_request` (time zone, end time), `invalid_cron`, or `conflict`
   * when the tenant holds `maxPerTenant` schedules already; nothing is stored then.
   */
  create(tenant: string, request: NewScheduleRequest): Promise<Schedule>;
  /**
   * Applies the change; `next_run` is computed again from now. Throws `not_found`, and what
   * {@link create} throws for a bad cadence (nothing is changed then).
   */
  update(tenant: string, id: string, change: ScheduleChange): Promise<Schedule>;
  /** Throws `not_found` for a schedule missing from the tenant. */
  remove(tenant: string, id: string): Promise<void>;
}

export interface ScheduleControlOptions {
  store: Pick<Store, 'schedules'>;
  scheduler: Scheduler;
  agents: AgentRegistry;
  /** Schedules one tenant may hold (SERVICE_SCHEDULES_MAX_PER_TENANT); no cap when absent. */
  maxPerTenant?: number;
  /** A webhook may be a path (RunControlOptions.webhookPaths). @defaultValue false */
  webhookPaths?: boolean;
}

/** The trigger that fires a stored schedule. */
export function triggerOf(tenant: string, schedule: Schedule): ScheduleTrigger {
  return { schedule_id: schedule.id, tenant, cron_expr: schedule.cron_expr, timezone: schedule.timezone };
}

/**
 * Whether a tick at `ms` (epoch) fires the schedule: it is enabled and not past its end. A
 * schedule has a trigger exactly while a tick from now on could fire it.
 */
export function firesAt(schedule: Pick<Schedule, 'enabled' | 'end_time'>, ms: number): boolean {
  return schedule.enabled !== false && (schedule.end_time === undefined || ms <= Date.parse(schedule.end_time));
}

/** A webhook URL the runs of the fires will accept (as RunControl.startRun checks it): `bad_request` otherwise, before anything is stored. */
function checkedWebhook(url: string, webhookPaths: boolean): string {
  const problem = webhookUrlProblem(url, { paths: webhookPaths });
  if (problem) throw badRequest(`webhook: ${problem}.`);
  return url;
}

/** An RFC 3339 time as stored (UTC, milliseconds); `bad_request` naming `field` otherwise. */
function timeOf(field: string, value: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw badRequest(`${field}: "${value}" is not an RFC 3339 date-time.`);
  return new Date(ms).toISOString();
}

/**
 * The schedule is stored before its trigger exists and deleted before its trigger goes, so a
 * crash between the two writes leaves either a schedule without a trigger or a trigger without
 * a schedule; worker-start reconciliation ({@link reconcileSchedules}) heals both.
 */
export function createScheduleControl(options: ScheduleControlOptions): ScheduleControl {
  const { store, scheduler, agents } = options;
  const unregistered = (error: unknown) => new AppError('unavailable', 'The schedule could not be registered with the scheduler.', { cause: error });
  return {
    async create(tenant, request) {
      if (!agents.get(request.agent_id)) throw new AppError('unknown_agent', `Agent "${request.agent_id}" is not registered.`);
      const timezone = validateTimezone(request.timezone ?? DEFAULT_TIMEZONE);
      const cron = validateCron(request.cron_expr, timezone);
      const now = Date.now();
      const newSession = request.new_session ?? true;
      const { enabled, graph, multitask, metadata, webhook, on_run_completed: afterRun } = request;
      const schedule: Schedule = {
        id: newId(),
        agent_id: request.agent_id,
        cron_expr: cron,
        input: request.input ?? {},
        new_session: newSession,
        timezone,
        next_run: nextRunAfter(cron, timezone, now),
        created_at: nowIso(() => now),
        ...(newSession ? {} : { session_id: request.session_id ?? newId() }),
        ...(request.end_time === undefined ? {} : { end_time: timeOf('end_time', request.end_time) }),
        ...(enabled === undefined ? {} : { enabled }),
        ...(graph === undefined ? {} : { graph }),
        ...(multitask === undefined ? {} : { multitask }),
        ...(metadata === undefined ? {} : { metadata: newMetadata(metadata) }),
        ...(webhook === undefined ? {} : { webhook: checkedWebhook(webhook, options.webhookPaths ?? false) }),
        ...(afterRun === undefined || !newSession ? {} : { on_run_completed: afterRun }),
      };
      await store.schedules.createSchedule(tenant, schedule, options.maxPerTenant);
      if (!firesAt(schedule, now)) return schedule;
      try {
        await scheduler.upsert(triggerOf(tenant, schedule));
      } catch (error) {
        // Answering an error while the schedule stays stored would let it fire after the next
        // reconciliation; take it back (if this fails too, reconciliation restores consistency).
        await store.schedules.deleteSchedule(tenant, schedule.id).catch(() => {});
        throw unregistered(error);
      }
      return schedule;
    },

    async update(tenant, id, change) {
      const current = await store.schedules.getSchedule(tenant, id);
      if (!current) throw notFound('The schedule');
      const timezone = change.timezone === undefined ? current.timezone : validateTimezone(change.timezone);
      const cron = validateCron(change.cron_expr ?? current.cron_expr, timezone);
      const now = Date.now();
      const { input, enabled, graph, webhook, end_time: end, metadata, on_run_completed: afterRun } = change;
      const patch: SchedulePatch = {
        cron_expr: cron,
        timezone,
        next_run: nextRunAfter(cron, timezone, now),
        updated_at: nowIso(() => now),
        ...(input === undefined ? {} : { input }),
        ...(enabled === undefined ? {} : { enabled }),
        ...(graph === undefined ? {} : { graph }),
        ...(webhook === undefined ? {} : { webhook: checkedWebhook(webhook, options.webhookPaths ?? false) }),
        ...(end === undefined ? {} : { end_time: end === null ? null : timeOf('end_time', end) }),
        ...(metadata === undefined ? {} : { metadata: mergeMetadata(current.metadata ?? {}, metadata) }),
        ...(afterRun === undefined || !current.new_session ? {} : { on_run_completed: afterRun }),
      };
      const updated = await store.schedules.updateSchedule(tenant, id, patch);
      if (!updated) throw notFound('The schedule');
      // The stored change stands; a trigger write that fails is healed by the next reconciliation.
      try {
        if (firesAt(updated, now)) await scheduler.upsert(triggerOf(tenant, updated));
        else await scheduler.remove(id);
      } catch (error) {
        throw unregistered(error);
      }
      return updated;
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
 * Makes the triggers match the stored schedules: a schedule that can fire (see {@link firesAt})
 * without its trigger (or with one of another cadence) gets it; a trigger without a schedule,
 * or of one disabled or past its end, is removed. Triggers that already
 * match are left alone, so a pending late tick keeps its place. One trigger that fails does not
 * stop the others; the report counts it.
 */
export async function reconcileSchedules(store: Pick<Store, 'schedules'>, scheduler: Scheduler): Promise<ReconcileReport> {
  // Triggers first: a schedule created in between is then seen stored without its trigger
  // (upserted again, harmlessly), never as a trigger without its schedule (removed).
  const triggers = new Map((await scheduler.list()).map((t) => [t.schedule_id, t]));
  const stored = await store.schedules.listAllSchedules();
  const now = Date.now();
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
    if (!firesAt(schedule, now)) {
      if (existing) await attempt(() => scheduler.remove(schedule.id), 'removed');
    } else if (!existing || !sameTrigger(existing, wanted)) {
      await attempt(() => scheduler.upsert(wanted), 'upserted');
    }
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
