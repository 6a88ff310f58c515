import {
  FINAL_FIRE_STATUSES,
  SCHEDULE_HISTORY_LIMIT,
  SETTLING_RUN_STATUSES,
  type Run,
  type Schedule,
  type ScheduleHistoryRecord,
} from '../../domain/types.js';
import { tooManySchedules } from '../../domain/schedule-cap.js';
import type { NewScheduleFire, Page, ScheduleFireUpdate, SchedulePatch, ScheduleStore, TenantSchedule } from '../../ports/store.js';

interface ScheduleRecord {
  schedule: Schedule;
  createdMs: number;
  /** Fire records by fire id; `order` lists the ids newest first. */
  fires: Map<string, ScheduleHistoryRecord>;
  order: string[];
}

/**
 * The ScheduleStore part of the memory Store. Same semantics as
 * the Redis adapter, checked by the shared schedule-store contract suite.
 */
export class MemoryScheduleStore implements ScheduleStore {
  private readonly schedulesByTenant = new Map<string, Map<string, ScheduleRecord>>();
  /** run id → the fire record it settles, per tenant. */
  private readonly fireOfRun = new Map<string, Map<string, { scheduleId: string; fireId: string }>>();

  private schedules(tenant: string): Map<string, ScheduleRecord> {
    let map = this.schedulesByTenant.get(tenant);
    if (!map) this.schedulesByTenant.set(tenant, (map = new Map()));
    return map;
  }

  private runIndex(tenant: string): Map<string, { scheduleId: string; fireId: string }> {
    let map = this.fireOfRun.get(tenant);
    if (!map) this.fireOfRun.set(tenant, (map = new Map()));
    return map;
  }

  async createSchedule(tenant: string, schedule: Schedule, limit?: number): Promise<void> {
    if (limit !== undefined && this.schedules(tenant).size >= limit) throw tooManySchedules(limit);
    this.schedules(tenant).set(schedule.id, {
      schedule: structuredClone(schedule),
      createdMs: Date.parse(schedule.created_at),
      fires: new Map(),
      order: [],
    });
  }

  async getSchedule(tenant: string, id: string): Promise<Schedule | null> {
    const record = this.schedules(tenant).get(id);
    return record ? structuredClone(record.schedule) : null;
  }

  async listSchedules(tenant: string, page: Page): Promise<Schedule[]> {
    return [...this.schedules(tenant).values()]
      .sort((a, b) => b.createdMs - a.createdMs || (a.schedule.id < b.schedule.id ? 1 : a.schedule.id > b.schedule.id ? -1 : 0))
      .slice(page.offset, page.offset + page.limit)
      .map((r) => structuredClone(r.schedule));
  }

  async updateSchedule(tenant: string, id: string, patch: SchedulePatch): Promise<Schedule | null> {
    const record = this.schedules(tenant).get(id);
    if (!record) return null;
    const { end_time, ...rest } = structuredClone(patch);
    const changed: Schedule = { ...record.schedule };
    for (const [field, value] of Object.entries(rest)) if (value !== undefined) Object.assign(changed, { [field]: value });
    if (end_time === null) delete changed.end_time;
    else if (end_time !== undefined) changed.end_time = end_time;
    record.schedule = changed;
    return structuredClone(changed);
  }

  async deleteSchedule(tenant: string, id: string): Promise<boolean> {
    const record = this.schedules(tenant).get(id);
    if (!record) return false;
    for (const fire of record.fires.values()) if (fire.run_id) this.runIndex(tenant).delete(fire.run_id);
    return this.schedules(tenant).delete(id);
  }

  async listAllSchedules(): Promise<TenantSchedule[]> {
    return [...this.schedulesByTenant].flatMap(([tenant, map]) =>
      [...map.values()].map((r) => ({ tenant, schedule: structuredClone(r.schedule) })),
    );
  }

  async beginScheduleFire(tenant: string, scheduleId: string, fire: NewScheduleFire): Promise<'begun' | 'duplicate' | 'gone'> {
    const record = this.schedules(tenant).get(scheduleId);
    if (!record) return 'gone';
    if (record.fires.has(fire.fire_id)) return 'duplicate';
    record.fires.set(fire.fire_id, {
      schedule_id: scheduleId,
      session_id: fire.session_id,
      fired_at: fire.fired_at,
      due_at: fire.due_at,
      status: 'running',
    });
    record.order.unshift(fire.fire_id);
    for (const dropped of record.order.splice(SCHEDULE_HISTORY_LIMIT)) {
      const runId = record.fires.get(dropped)?.run_id;
      if (runId) this.runIndex(tenant).delete(runId);
      record.fires.delete(dropped);
    }
    record.schedule.next_run = fire.next_run;
    return 'begun';
  }

  async updateScheduleFire(tenant: string, scheduleId: string, fireId: string, update: ScheduleFireUpdate): Promise<void> {
    const fire = this.schedules(tenant).get(scheduleId)?.fires.get(fireId);
    if (!fire || FINAL_FIRE_STATUSES.includes(fire.status)) return;
    if (update.status) fire.status = update.status;
    if (update.error) fire.error = update.error;
    if (update.run_id) fire.run_id = update.run_id;
    if (!fire.run_id) return;
    if (FINAL_FIRE_STATUSES.includes(fire.status)) this.runIndex(tenant).delete(fire.run_id);
    else this.runIndex(tenant).set(fire.run_id, { scheduleId, fireId });
  }

  async settleScheduleRun(tenant: string, run: Pick<Run, 'id' | 'status' | 'error'>): Promise<string | null> {
    const link = this.runIndex(tenant).get(run.id);
    const status = SETTLING_RUN_STATUSES.find((s) => s === run.status);
    if (!link || !status) return null;
    await this.updateScheduleFire(tenant, link.scheduleId, link.fireId, {
      status,
      ...(run.error ? { error: run.error } : {}),
    });
    return link.scheduleId;
  }

  /** Drops the fire links of runs that no longer exist (their session was deleted or expired). */
  forgetRuns(tenant: string, runIds: readonly string[]): void {
    const index = this.fireOfRun.get(tenant);
    if (index) for (const id of runIds) index.delete(id);
  }

  async listScheduleHistory(tenant: string, scheduleId: string): Promise<ScheduleHistoryRecord[]> {
    const record = this.schedules(tenant).get(scheduleId);
    return record ? record.order.map((id) => structuredClone(record.fires.get(id)!)) : [];
  }
}
