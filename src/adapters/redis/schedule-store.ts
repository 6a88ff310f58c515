import {
  SCHEDULE_HISTORY_LIMIT,
  SETTLING_RUN_STATUSES,
  type JsonObject,
  type Multitask,
  type Run,
  type Schedule,
  type ScheduleHistoryRecord,
} from '../../domain/types.js';
import type { NewScheduleFire, Page, ScheduleFireUpdate, SchedulePatch, ScheduleStore, TenantSchedule } from '../../ports/store.js';
import { tooManySchedules } from '../../domain/schedule-cap.js';
import type { RedisContext } from './context.js';
import { flatToObject } from './hash.js';

/**
 * The ScheduleStore part of the Redis Store. A schedule is a hash in
 * its tenant's slot; its fire records are a hash by fire id plus a capped list of ids, newest
 * first, written by Lua. A global hash (schedule id → tenant) lets the worker reconcile
 * schedules across tenants; it is written before a schedule and cleared after one, so an
 * entry without its schedule is only ever a leftover that readers skip.
 */
export class RedisScheduleStore implements ScheduleStore {
  constructor(private readonly c: RedisContext) {}

  async createSchedule(tenant: string, schedule: Schedule, limit?: number): Promise<void> {
    await this.c.redis.hset(this.c.keys.scheduleTenants(), schedule.id, tenant);
    const reply = await this.c.script(
      'createSchedule',
      [this.c.keys.schedule(tenant, schedule.id), this.c.keys.schedules(tenant)],
      [schedule.id, Date.parse(schedule.created_at), limit ?? '', ...scheduleFields(schedule)],
    );
    if (Number(reply[0]) === 1) return;
    // Refused: the index entry written first is taken back (a leftover would only be skipped).
    await this.c.redis.hdel(this.c.keys.scheduleTenants(), schedule.id);
    throw tooManySchedules(limit!);
  }

  async getSchedule(tenant: string, id: string): Promise<Schedule | null> {
    return toSchedule(await this.c.redis.hgetall(this.c.keys.schedule(tenant, id)));
  }

  async listSchedules(tenant: string, page: Page): Promise<Schedule[]> {
    const ids = await this.c.redis.zrevrange(this.c.keys.schedules(tenant), page.offset, page.offset + page.limit - 1);
    const schedules = await this.readAll(ids.map((id) => this.c.keys.schedule(tenant, id)));
    return schedules.filter((s): s is Schedule => s !== null);
  }

  async updateSchedule(tenant: string, id: string, patch: SchedulePatch): Promise<Schedule | null> {
    const { end_time, ...rest } = patch;
    const pairs = [...scheduleFields(rest), ...(end_time === null ? ['end_time', ''] : end_time !== undefined ? ['end_time', end_time] : [])];
    const reply = await this.c.script<string[]>('updateSchedule', [this.c.keys.schedule(tenant, id)], pairs);
    return toSchedule(flatToObject(reply));
  }

  async deleteSchedule(tenant: string, id: string): Promise<boolean> {
    const reply = await this.c.script(
      'deleteSchedule',
      [
        this.c.keys.schedule(tenant, id),
        this.c.keys.schedules(tenant),
        this.c.keys.scheduleFires(tenant, id),
        this.c.keys.scheduleHistory(tenant, id),
        this.c.keys.scheduleRuns(tenant),
      ],
      [id],
    );
    if (Number(reply[0]) !== 1) return false;
    await this.c.redis.hdel(this.c.keys.scheduleTenants(), id);
    return true;
  }

  async listAllSchedules(): Promise<TenantSchedule[]> {
    const index = Object.entries(await this.c.redis.hgetall(this.c.keys.scheduleTenants()));
    const schedules = await this.readAll(index.map(([id, tenant]) => this.c.keys.schedule(tenant, id)));
    return index.flatMap(([, tenant], i) => {
      const schedule = schedules[i];
      return schedule ? [{ tenant, schedule }] : [];
    });
  }

  async beginScheduleFire(tenant: string, scheduleId: string, fire: NewScheduleFire): Promise<'begun' | 'duplicate' | 'gone'> {
    const { fire_id, next_run, ...rest } = fire;
    const record: ScheduleHistoryRecord = { schedule_id: scheduleId, ...rest, status: 'running' };
    const reply = await this.c.script(
      'beginScheduleFire',
      [
        this.c.keys.schedule(tenant, scheduleId),
        this.c.keys.scheduleFires(tenant, scheduleId),
        this.c.keys.scheduleHistory(tenant, scheduleId),
        this.c.keys.scheduleRuns(tenant),
      ],
      [fire_id, JSON.stringify(record), next_run, SCHEDULE_HISTORY_LIMIT],
    );
    const code = Number(reply[0]);
    return code === 1 ? 'begun' : code === 0 ? 'duplicate' : 'gone';
  }

  async updateScheduleFire(tenant: string, scheduleId: string, fireId: string, update: ScheduleFireUpdate): Promise<void> {
    await this.c.script(
      'updateScheduleFire',
      [this.c.keys.scheduleFires(tenant, scheduleId), this.c.keys.scheduleRuns(tenant)],
      [fireId, update.status ?? '', update.run_id ?? '', update.error ?? '', scheduleId],
    );
  }

  async settleScheduleRun(tenant: string, run: Pick<Run, 'id' | 'status' | 'error'>): Promise<string | null> {
    const status = SETTLING_RUN_STATUSES.find((s) => s === run.status);
    if (!status) return null;
    const link = await this.c.redis.hget(this.c.keys.scheduleRuns(tenant), run.id);
    if (!link) return null;
    const [scheduleId = '', fireId = ''] = link.split(' ');
    await this.updateScheduleFire(tenant, scheduleId, fireId, {
      status,
      ...(run.error ? { error: run.error } : {}),
    });
    return scheduleId;
  }

  async listScheduleHistory(tenant: string, scheduleId: string): Promise<ScheduleHistoryRecord[]> {
    const ids = await this.c.redis.lrange(this.c.keys.scheduleHistory(tenant, scheduleId), 0, SCHEDULE_HISTORY_LIMIT - 1);
    if (ids.length === 0) return [];
    const docs = await this.c.redis.hmget(this.c.keys.scheduleFires(tenant, scheduleId), ...ids);
    return docs.flatMap((doc) => (doc ? [JSON.parse(doc) as ScheduleHistoryRecord] : []));
  }

  /** Schedule hashes, possibly of several tenants: separate commands, since their slots may differ on a cluster. */
  private async readAll(keys: string[]): Promise<(Schedule | null)[]> {
    return Promise.all(keys.map(async (key) => toSchedule(await this.c.redis.hgetall(key))));
  }
}

/** The JSON-valued fields of a schedule hash; the flags are '1' or '0'; the others are strings as they are. */
const JSON_FIELDS = new Set(['input', 'graph', 'metadata']);
const FLAG_FIELDS = new Set(['new_session', 'enabled']);

/** HSET pairs of the fields given (undefined ones are skipped). */
function scheduleFields(fields: Partial<Schedule>): string[] {
  return Object.entries(fields).flatMap(([field, value]) => {
    if (value === undefined) return [];
    if (JSON_FIELDS.has(field)) return [field, JSON.stringify(value)];
    if (FLAG_FIELDS.has(field)) return [field, value ? '1' : '0'];
    return [field, String(value)];
  });
}

function toSchedule(hash: Record<string, string>): Schedule | null {
  if (!hash.id) return null;
  const schedule: Schedule = {
    id: hash.id,
    agent_id: hash.agent_id ?? '',
    cron_expr: hash.cron_expr ?? '',
    input: JSON.parse(hash.input ?? '{}') as JsonObject,
    new_session: hash.new_session === '1',
    timezone: hash.timezone ?? 'UTC',
    next_run: hash.next_run ?? '',
    created_at: hash.created_at ?? '',
  };
  if (hash.session_id) schedule.session_id = hash.session_id;
  if (hash.end_time) schedule.end_time = hash.end_time;
  if (hash.enabled) schedule.enabled = hash.enabled === '1';
  if (hash.graph) schedule.graph = JSON.parse(hash.graph) as Record<string, unknown>;
  if (hash.multitask) schedule.multitask = hash.multitask as Multitask;
  if (hash.metadata) schedule.metadata = JSON.parse(hash.metadata) as JsonObject;
  if (hash.webhook) schedule.webhook = hash.webhook;
  if (hash.updated_at) schedule.updated_at = hash.updated_at;
  if (hash.on_run_completed) schedule.on_run_completed = hash.on_run_completed as 'delete' | 'keep';
  return schedule;
}
