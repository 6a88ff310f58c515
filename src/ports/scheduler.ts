/** What a scheduler needs to fire a schedule: its id, tenant and cadence. */
export interface ScheduleTrigger {
  schedule_id: string;
  tenant: string;
  /** A validated 5-field cron expression. */
  cron_expr: string;
  /** IANA time zone the expression is read in. */
  timezone: string;
}

/** One tick of a schedule, delivered to exactly one consumer. */
export interface ScheduleFire {
  tenant: string;
  schedule_id: string;
  /** The tick this fire belongs to (epoch ms); the fire itself may run later. */
  due_ms: number;
}

/** Handles one fire; throws only for infrastructure failures (they are logged, not retried). */
export type FireHandler = (fire: ScheduleFire) => Promise<void>;

/**
 * The cron triggers of schedules. API replicas upsert and remove triggers; workers consume
 * the fires ({@link ScheduleConsumer}). Each tick of a trigger is delivered once across all
 * consumers; ticks that pass while no consumer runs collapse into one late fire.
 */
export interface Scheduler {
  /** Creates the trigger or updates its cadence; idempotent. */
  upsert(trigger: ScheduleTrigger): Promise<void>;
  /** Removes the trigger and its pending tick; removing a missing one is a no-op. */
  remove(scheduleId: string): Promise<void>;
  /** Every trigger, for reconciliation with the stored schedules. */
  list(): Promise<ScheduleTrigger[]>;
  close(): Promise<void>;
}

/** The worker side of the Scheduler. */
export interface ScheduleConsumer {
  /** Starts receiving fires. */
  start(handler: FireHandler): void;
  /** Stops receiving fires and waits for running handlers, bounded by `timeoutMs`. Safe to call twice. */
  close(timeoutMs?: number): Promise<void>;
}
