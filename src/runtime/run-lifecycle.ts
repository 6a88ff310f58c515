import type { Logger } from 'pino';
import { tryExpected } from '../domain/errors.js';
import { rootSpan, runEvent } from '../domain/run-events.js';
import { ACTIVE_RUN_STATUSES, TERMINAL_RUN_STATUSES, type Run, type RunEvent, type RunStatus } from '../domain/types.js';
import type { EventBus } from '../ports/event-bus.js';
import type { RunQueue } from '../ports/run-queue.js';
import type { Store, UpdatedRun } from '../ports/store.js';
import { settleScheduledRun } from './schedule-fire.js';

export interface RunLifecycleOptions {
  store: Pick<Store, 'sessions' | 'runs' | 'schedules'>;
  events: EventBus;
  queue: RunQueue;
  logger: Logger;
  /** Called when a run reaches a status (metrics). */
  onRunStatus?: (run: Run) => void;
  /** Called after each published event (metrics). */
  onEvent?: (event: RunEvent) => void;
  /**
   * Called once when a run ends (completed, failed, cancelled), by whichever process ended it
   * (run webhooks), with its stored input when the write that ended it read it along. Must not
   * throw nor hold the caller: it runs on the run path.
   */
  onRunEnded?: (tenant: string, run: UpdatedRun) => void;
  /**
   * Called after a run's pause or end settled the record of the schedule fire that started it
   * (FireSessions.settled: the fire's session may go). Must not throw.
   */
  onScheduledRunSettled?: (tenant: string, run: Run, scheduleId: string) => Promise<void>;
}

/** The run an event is about. */
export type RunRef = Pick<Run, 'id' | 'session_id' | 'agent_id'>;

/** A run event before the lifecycle stamps it with its run and time. */
export type EventBody = Omit<RunEvent, 'session' | 'run_id' | 'agent_id' | 'ts'>;

export interface EndRun {
  status: 'failed' | 'cancelled';
  error: string;
  /** End it only from these statuses. @defaultValue queued, running, interrupted */
  from?: readonly RunStatus[];
  /** Who ended it (closes its pending approval with this `decided_by`). @defaultValue "system" */
  by?: string;
  /** An event published before the end event, only when this call ended the run. */
  announce?: EventBody;
}

/**
 * What every path that ends a run shares: the executor finishing, a cancel, a deadline, an
 * expired approval, a job the queue gave up on, the reaper. One conditional store write ends
 * the run (so two enders never both succeed); then the run's root span, its `failed` or
 * `cancelled` event, its schedule record, and the next run queued behind it on its session.
 */
export class RunLifecycle {
  constructor(private readonly options: RunLifecycleOptions) {}

  /** Publishes a run event, stamped with the run and the time. */
  async publish(tenant: string, run: RunRef, body: EventBody): Promise<void> {
    const event = runEvent(run, body);
    await this.options.events.publish(tenant, event);
    this.options.onEvent?.(event);
  }

  /** Counts events published elsewhere (the run journal's steps) in the metrics. */
  counted(events: readonly RunEvent[]): void {
    for (const event of events) this.options.onEvent?.(event);
  }

  /**
   * Reports a status a run reached (metrics); an end (completed, failed, cancelled) is also one
   * info line with the run, its status and its duration from creation, and goes to `onRunEnded`.
   */
  reached(tenant: string, run: UpdatedRun): void {
    this.options.onRunStatus?.(run);
    if (!TERMINAL_RUN_STATUSES.includes(run.status)) return;
    this.options.onRunEnded?.(tenant, run);
    const durationMs = Date.parse(run.updated_at) - Date.parse(run.created_at);
    this.options.logger.info(
      { tenant, run_id: run.id, session_id: run.session_id, agent_id: run.agent_id, status: run.status, duration_ms: durationMs, ...(run.error ? { error: run.error } : {}) },
      `run ${run.status}`,
    );
  }

  /**
   * Ends an active run as `failed` or `cancelled`. Resolves with the ended run, or null when it
   * was not in `from` (already ended, or ended by someone else first). Throws `not_found`.
   */
  async end(tenant: string, runId: string, end: EndRun): Promise<Run | null> {
    const updated = await tryExpected(
      this.options.store.runs.updateRun(tenant, runId, { status: end.status, error: end.error, from: end.from ?? ACTIVE_RUN_STATUSES, by: end.by ?? 'system' }),
      'conflict',
    );
    // Not in `from`: already ended, or ended by someone else first.
    if (!updated.ok) return null;
    const run = updated.value;
    // A run ended before its turn gives the turn back (a failure leaves a job that ends at once).
    await this.options.queue.withdraw({ tenant, id: run.id, ...(run.approval_id ? { approval_id: run.approval_id } : {}) }).catch((err: unknown) => {
      this.options.logger.warn({ err, run_id: run.id }, 'could not take an ended run out of the run queue');
    });
    // The worker executing a cancelled run aborts its node.
    if (run.status === 'cancelled') await this.options.events.signalCancel({ tenant, run_id: run.id, reason: end.error });
    if (end.announce) await this.publish(tenant, run, end.announce);
    await this.finished(tenant, run, run.created_at);
    const { queued_behind: _waiting, stored_input: _input, ...ended } = run;
    return ended;
  }

  /**
   * Completes a running run whose engine reached the end without a step that completed it:
   * resolves with the run, or with it as it is when it was no longer running (cancelled).
   */
  async complete(tenant: string, run: Run): Promise<Run | undefined> {
    const completed = await tryExpected(this.options.store.runs.updateRun(tenant, run.id, { status: 'completed', from: ['running'] }), 'conflict');
    if (!completed.ok) return (await this.options.store.runs.getRun(tenant, run.id)) ?? undefined;
    const done = completed.value;
    await this.finished(tenant, done, run.created_at);
    const { queued_behind: _waiting, stored_input: _input, ...ran } = done;
    return ran;
  }

  /** A run a journal step completed (its end event and root span went with the step): metrics, then {@link settled}. */
  async completedByStep(tenant: string, run: UpdatedRun, scheduled: boolean): Promise<Run> {
    this.reached(tenant, run);
    await this.settled(tenant, run, scheduled);
    const { queued_behind: _waiting, stored_input: _input, ...completed } = run;
    return completed;
  }

  /**
   * After a run reached a terminal status (written by the caller): its root span from `start`,
   * its end event, the metrics, then {@link settled}.
   */
  async finished(tenant: string, run: UpdatedRun, start: string): Promise<void> {
    const { status, error } = run;
    await this.options.store.sessions.addSpan(tenant, run.session_id, rootSpan({ ...run, created_at: start }, status, error));
    const body: EventBody =
      status === 'completed' ? { type: 'completed' } : { type: status === 'cancelled' ? 'cancelled' : 'failed', error: error ?? status };
    await this.publish(tenant, run, body);
    this.reached(tenant, run);
    await this.settled(tenant, run);
  }

  /**
   * What follows a run's pause or end: the schedule record it belongs to and, when it ended
   * with runs queued behind it, the next of them (made current and enqueued).
   */
  async settled(tenant: string, run: UpdatedRun, scheduled = true): Promise<void> {
    const { store, logger } = this.options;
    // `scheduled` false: the caller knows no schedule fire is linked to the run (one read saved).
    const scheduleId = scheduled ? await settleScheduledRun(store, tenant, run) : null;
    if (scheduleId) await this.options.onScheduledRunSettled?.(tenant, run, scheduleId);
    if (!run.queued_behind) return;
    await this.promote(tenant, run.session_id).catch((err: unknown) => {
      // The reaper promotes it later.
      logger.warn({ err, session_id: run.session_id }, 'could not start the next run queued on the session');
    });
  }

  /**
   * Starts the oldest run queued behind on the session when it has no active run; a waiting run
   * that failed on the way (its input no longer fits) ends as any failed run does.
   */
  async promote(tenant: string, sessionId: string): Promise<Run | null> {
    const { started, failed } = await this.options.store.runs.promoteNext(tenant, sessionId);
    for (const run of failed) await this.finished(tenant, run, run.created_at);
    if (started) {
      await this.options.queue.enqueue({ kind: 'start', tenant, run_id: started.id, session_id: started.session_id, agent_id: started.agent_id });
    }
    return started;
  }
}
