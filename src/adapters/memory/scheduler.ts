import { nextFireMs } from '../../domain/cron.js';
import { setLongTimeout, type LongTimer } from '../../domain/long-timer.js';
import { withTimeout } from '../../domain/timeout.js';
import type { FireHandler, ScheduleConsumer, ScheduleFire, ScheduleTrigger, Scheduler } from '../../ports/scheduler.js';

export interface MemorySchedulerOptions {
  /** Reports a fire whose handler threw (the embedded mode has no retry). */
  onError?: (fire: ScheduleFire, error: unknown) => void;
}

interface Armed {
  trigger: ScheduleTrigger;
  timer: LongTimer;
}

/**
 * The Scheduler and its consumer in one process (embedded mode): one timer per trigger, armed
 * for the next tick by cron-parser in the trigger's time zone. A tick that comes while no
 * handler is started is dropped, not replayed. Timers are unref'd: they never keep a process
 * alive on their own.
 */
export class MemoryScheduler implements Scheduler, ScheduleConsumer {
  private readonly armed = new Map<string, Armed>();
  private readonly running = new Set<Promise<void>>();
  private handler: FireHandler | undefined;
  private closed = false;

  constructor(private readonly options: MemorySchedulerOptions = {}) {}

  async upsert(trigger: ScheduleTrigger): Promise<void> {
    if (this.closed) throw new Error('The scheduler is closed.');
    this.disarm(trigger.schedule_id);
    this.arm({ ...trigger }, Date.now());
  }

  async remove(scheduleId: string): Promise<void> {
    this.disarm(scheduleId);
  }

  async list(): Promise<ScheduleTrigger[]> {
    return [...this.armed.values()].map((a) => ({ ...a.trigger }));
  }

  start(handler: FireHandler): void {
    this.handler = handler;
  }

  private disarm(scheduleId: string): void {
    const armed = this.armed.get(scheduleId);
    if (armed) armed.timer.clear();
    this.armed.delete(scheduleId);
  }

  /** Arms the trigger for its first tick strictly after `afterMs`. */
  private arm(trigger: ScheduleTrigger, afterMs: number): void {
    const dueMs = nextFireMs(trigger.cron_expr, trigger.timezone, afterMs);
    this.wait(trigger, dueMs);
  }

  private wait(trigger: ScheduleTrigger, dueMs: number): void {
    const timer = setLongTimeout(() => this.wake(trigger, dueMs), dueMs - Date.now(), { unref: true });
    this.armed.set(trigger.schedule_id, { trigger, timer });
  }

  private wake(trigger: ScheduleTrigger, dueMs: number): void {
    if (this.closed || this.armed.get(trigger.schedule_id)?.trigger !== trigger) return;
    if (Date.now() < dueMs) return this.wait(trigger, dueMs);
    this.arm(trigger, Math.max(Date.now(), dueMs));
    if (this.handler) this.fire({ tenant: trigger.tenant, schedule_id: trigger.schedule_id, due_ms: dueMs }, this.handler);
  }

  private fire(fire: ScheduleFire, handler: FireHandler): void {
    const task = handler(fire)
      .catch((error: unknown) => this.options.onError?.(fire, error))
      .finally(() => this.running.delete(task));
    this.running.add(task);
  }

  /** Clears every timer and waits for running handlers, bounded by `timeoutMs`. */
  async close(timeoutMs = 10_000): Promise<void> {
    this.closed = true;
    for (const id of [...this.armed.keys()]) this.disarm(id);
    // Handlers still running past the bound are abandoned (the process is stopping).
    await withTimeout(Promise.allSettled([...this.running]), timeoutMs).catch(() => {});
  }
}
