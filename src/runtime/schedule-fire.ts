import type { Logger } from 'pino';
import { nextRunAfter } from '../domain/cron.js';
import { isAppError } from '../domain/errors.js';
import { newId } from '../domain/time.js';
import type { Run, Schedule } from '../domain/types.js';
import type { RunControl, RunTicket } from '../ports/run-control.js';
import type { FireHandler, ScheduleFire, Scheduler } from '../ports/scheduler.js';
import type { ScheduleFireUpdate, Store } from '../ports/store.js';
import { firesAt, triggerOf } from './schedule-control.js';
import type { FireSessions } from './schedule-sessions.js';
import { inEntrySpan } from '../observability/entry-span.js';

/** How a fire ended, for `agentplane_schedule_fires_total{status}`. */
export type FireOutcome = 'started' | 'skipped' | 'failed';

export interface ScheduleFirerOptions {
  store: Pick<Store, 'runs' | 'schedules'>;
  scheduler: Scheduler;
  /** Starts the runs, with the same validation and atomicity as POST /api/runs. */
  runControl: RunControl;
  logger: Logger;
  onFire?: (outcome: FireOutcome) => void;
  /** @defaultValue Date.now */
  clock?: () => number;
  /** What becomes of a fire's new session once its run stops (a stateless cron's `on_run_completed`). */
  sessions?: FireSessions;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * Handles schedule fires: records the tick (`fired_at` = when the fire runs, `due_at` = its
 * tick) and moves `next_run`, then starts a run on a new session or on the schedule's one
 * session (a graph agent's run with the schedule's `graph` options, under its `multitask`). A
 * reused session whose run is still active makes the tick `skipped`. The record stays
 * `running` until the run ends; {@link settleScheduledRun} settles it then. A tick of a
 * disabled schedule, or past its `end_time`, starts nothing and leaves no record.
 * Never throws: every failure is recorded or logged, and a fire is never retried.
 */
export function createScheduleFirer(options: ScheduleFirerOptions): FireHandler {
  const { store, scheduler, runControl, logger } = options;
  const clock = options.clock ?? Date.now;

  return async function fire(tick: ScheduleFire): Promise<void> {
    const log = logger.child({ schedule_id: tick.schedule_id, tenant: tick.tenant, due_at: iso(tick.due_ms) });
    try {
      // Tracing on: each fire is a trace of its own; the run it starts is a child of its span.
      const attributes = { 'agentplane.schedule.id': tick.schedule_id, 'agentplane.schedule.due_at': iso(tick.due_ms) };
      const outcome = await inEntrySpan('schedule fire', 'root', attributes, async (span) => {
        const fired = await fireOnce(tick, clock(), log);
        span?.setAttribute('agentplane.schedule.outcome', fired ?? 'dropped');
        return fired;
      });
      if (outcome) options.onFire?.(outcome);
    } catch (error) {
      log.error({ err: error }, 'schedule fire failed');
      options.onFire?.('failed');
    }
  };

  async function fireOnce(tick: ScheduleFire, firedMs: number, log: Logger): Promise<FireOutcome | undefined> {
    const schedule = await store.schedules.getSchedule(tick.tenant, tick.schedule_id);
    if (!schedule) {
      // A trigger that outlived its schedule (deleted, or a crash between the two writes).
      await scheduler.remove(tick.schedule_id);
      log.info('trigger without a schedule removed');
      return undefined;
    }
    if (!firesAt(schedule, tick.due_ms)) {
      await dropTrigger(tick, log);
      return undefined;
    }
    const fireId = String(tick.due_ms);
    // The sessions of the fires this one pushes out of the history, when they are kept only while listed.
    const leaving = (await options.sessions?.leaving(tick.tenant, schedule)) ?? [];
    const sessionId = schedule.new_session ? newId() : (schedule.session_id ?? schedule.id);
    const begun = await store.schedules.beginScheduleFire(tick.tenant, schedule.id, {
      fire_id: fireId,
      session_id: sessionId,
      fired_at: iso(firedMs),
      due_at: iso(tick.due_ms),
      next_run: nextRunAfter(schedule.cron_expr, schedule.timezone, Math.max(firedMs, tick.due_ms)),
    });
    if (begun !== 'begun') {
      log.warn({ outcome: begun }, 'schedule fire not started');
      return undefined;
    }
    if (leaving.length > 0) await options.sessions?.forget(tick.tenant, leaving);
    const settle = (update: ScheduleFireUpdate) =>
      store.schedules.updateScheduleFire(tick.tenant, schedule.id, fireId, update);

    let ticket: RunTicket;
    try {
      ticket = await runControl.startRun(tick.tenant, {
        agent_id: schedule.agent_id,
        session_id: sessionId,
        // A graph's run keeps its metadata (GraphRunInput.metadata): the schedule's, as it is at the fire.
        ...(schedule.graph ? { graph: { ...schedule.graph, ...(schedule.metadata ? { metadata: schedule.metadata } : {}) } } : { input: schedule.input }),
        ...(schedule.multitask ? { multitask: schedule.multitask } : {}),
        ...(schedule.webhook ? { webhook: schedule.webhook } : {}),
      });
    } catch (error) {
      if (isSessionBusy(error, schedule)) {
        await settle({ status: 'skipped' });
        log.info({ session_id: sessionId }, 'schedule tick skipped: its session is busy');
        return 'skipped';
      }
      const message = isAppError(error) && error.expose ? error.message : 'The run could not be started.';
      await settle({ status: 'failed', error: message });
      log.error({ err: error }, 'scheduled run could not be started');
      return 'failed';
    }
    await settle({ run_id: ticket.run_id });
    // The run may have ended before the record named it; settle the record from the run then.
    const run = await store.runs.getRun(tick.tenant, ticket.run_id);
    const settledBy = run ? await settleScheduledRun(store, tick.tenant, run) : null;
    if (run && settledBy) await options.sessions?.settled(tick.tenant, run, settledBy);
    log.info({ run_id: ticket.run_id, session_id: sessionId }, 'schedule fired');
    return 'started';
  }

  /**
   * A tick of a disabled schedule, or one past its end: no record, and its trigger goes. A
   * change that made it fire again meanwhile wrote the store before its own trigger upsert,
   * which may have come before this removal: read again, and put the trigger back then.
   */
  async function dropTrigger(tick: ScheduleFire, log: Logger): Promise<void> {
    await scheduler.remove(tick.schedule_id);
    const now = await store.schedules.getSchedule(tick.tenant, tick.schedule_id);
    if (now && firesAt(now, clock())) await scheduler.upsert(triggerOf(tick.tenant, now));
    else log.info('tick of a disabled or ended schedule dropped; its trigger removed');
  }
}

function isSessionBusy(error: unknown, schedule: Schedule): boolean {
  return !schedule.new_session && isAppError(error) && error.code === 'conflict';
}

/**
 * Where a scheduled run's end reaches its fire record, the one place of that rule: called by
 * the run job handler when a run ends or pauses, and by the firer for a run that ended before
 * the record named it. A run no fire started changes nothing (one read of the run links).
 * Answers the settled record's schedule id, or null.
 */
export async function settleScheduledRun(
  store: Pick<Store, 'schedules'>,
  tenant: string,
  run: Pick<Run, 'id' | 'status' | 'error'>,
): Promise<string | null> {
  return store.schedules.settleScheduleRun(tenant, run);
}
