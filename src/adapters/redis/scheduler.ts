import { Queue, Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { FireHandler, ScheduleConsumer, ScheduleTrigger, Scheduler } from '../../ports/scheduler.js';
import { closeWorker } from './close-worker.js';

/** Name of the BullMQ queue of schedule fires. */
export const SCHEDULES_QUEUE = 'schedules';

/** The data of every fire job (the job scheduler's template). */
interface FireJobData {
  tenant: string;
  schedule_id: string;
}

const FIRE_JOB_OPTIONS = {
  // A fire is never retried: a second attempt could start a second run for the same tick.
  attempts: 1,
  removeOnComplete: { count: 1000 },
  removeOnFail: { count: 1000 },
} as const;

export interface BullSchedulerOptions {
  /** An ioredis connection (with `maxRetriesPerRequest: null`) or its options. */
  connection: ConnectionOptions;
  /** BullMQ key prefix: SERVICE_KEY_PREFIX. */
  prefix: string;
}

/**
 * The Scheduler on BullMQ job schedulers: one per schedule, id = schedule id, pattern = the
 * cron expression, tz = the schedule's time zone. BullMQ creates exactly one job per tick
 * (its id derives from the scheduler id and the tick time), whichever worker takes it.
 */
export class BullScheduler implements Scheduler {
  private readonly queue: Queue<FireJobData>;
  private closing: Promise<void> | undefined;

  constructor(options: BullSchedulerOptions) {
    this.queue = new Queue<FireJobData>(SCHEDULES_QUEUE, { connection: options.connection, prefix: options.prefix });
    this.queue.on('error', () => {});
  }

  async upsert(trigger: ScheduleTrigger): Promise<void> {
    await this.queue.upsertJobScheduler(
      trigger.schedule_id,
      { pattern: trigger.cron_expr, tz: trigger.timezone },
      { name: 'fire', data: { tenant: trigger.tenant, schedule_id: trigger.schedule_id }, opts: FIRE_JOB_OPTIONS },
    );
  }

  async remove(scheduleId: string): Promise<void> {
    await this.queue.removeJobScheduler(scheduleId);
  }

  async list(): Promise<ScheduleTrigger[]> {
    const schedulers = await this.queue.getJobSchedulers(0, -1, true);
    return schedulers.map((s) => ({
      schedule_id: s.key,
      tenant: s.template?.data?.tenant ?? '',
      cron_expr: s.pattern ?? '',
      timezone: s.tz ?? '',
    }));
  }

  close(): Promise<void> {
    return (this.closing ??= this.queue.close());
  }
}

export interface BullScheduleConsumerOptions extends BullSchedulerOptions {
  /**
   * Fires handled at once by this process. A fire is a few Redis round trips (the run itself
   * goes to the `runs` queue), so many can overlap. @defaultValue 50
   */
  concurrency?: number;
  onError?: (error: unknown) => void;
}

/** Worker side: a BullMQ Worker on the `schedules` queue. */
export class BullScheduleConsumer implements ScheduleConsumer {
  private worker: Worker<FireJobData> | undefined;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: BullScheduleConsumerOptions) {}

  start(handler: FireHandler): void {
    const { connection, prefix, concurrency = 50 } = this.options;
    this.worker = new Worker<FireJobData>(
      SCHEDULES_QUEUE,
      async (job) => handler({ tenant: job.data.tenant, schedule_id: job.data.schedule_id, due_ms: dueMs(job) }),
      // A fire whose worker died is not handed to another one (maxStalledCount 0): the run it
      // may have started must not start twice. The tick's history record shows it began.
      { connection, prefix, concurrency, maxStalledCount: 0 },
    );
    this.worker.on('error', (error) => this.options.onError?.(error));
  }

  close(timeoutMs = 10_000): Promise<void> {
    const worker = this.worker;
    if (!worker) return Promise.resolve();
    // Fires still running past the bound are abandoned: their jobs fail as stalled, never re-run.
    return (this.closing ??= closeWorker(worker, timeoutMs));
  }
}

/** The tick a job belongs to: BullMQ keeps it as `prevMillis` (and in the job id). */
function dueMs(job: Job<FireJobData>): number {
  const fromId = Number(job.id?.split(':').at(-1));
  return job.opts.prevMillis ?? (Number.isFinite(fromId) ? fromId : job.timestamp);
}
