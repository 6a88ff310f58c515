import { describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/time.js';
import type { Schedule } from '../../src/domain/types.js';
import { SCHEDULE_HISTORY_LIMIT } from '../../src/domain/types.js';
import type { NewScheduleFire, Store } from '../../src/ports/store.js';

/** Builds a fresh Store for one test; both adapters must pass every test of this suite. */
export type StoreFactory = () => Promise<Store>;

const T = 'tenant-a';
// On the test Redis Cluster, T and OTHER land on different masters (test/cluster checks it).
const OTHER = 'tenant-c';
const PAGE = { limit: 50, offset: 0 };

let clock = Date.parse('2026-11-21T10:00:00.000Z');

function schedule(overrides: Partial<Schedule> = {}): Schedule {
  clock += 1000;
  return {
    id: newId(),
    agent_id: 'echo',
    cron_expr: '* * * * *',
    input: { topic: 'ünïcode "q"', list: [], nested: { n: 1.5 } },
    new_session: true,
    timezone: 'UTC',
    next_run: '2026-11-21T10:01:00.000Z',
    created_at: new Date(clock).toISOString(),
    ...overrides,
  };
}

function fire(n: number, overrides: Partial<NewScheduleFire> = {}): NewScheduleFire {
  const due = Date.parse('2026-11-21T10:00:00.000Z') + n * 60_000;
  return {
    fire_id: String(due),
    session_id: `session-${n}`,
    fired_at: new Date(due + 15).toISOString(),
    due_at: new Date(due).toISOString(),
    next_run: new Date(due + 60_000).toISOString(),
    ...overrides,
  };
}

export function scheduleStoreContract(name: string, makeStore: StoreFactory): void {
  describe(`ScheduleStore contract: ${name}`, () => {
    it('stores a schedule as given and lists the tenant’s schedules newest first, paged', async () => {
      const store = await makeStore();
      const a = schedule({ on_run_completed: 'delete' });
      const b = schedule({ new_session: false, session_id: 'reused', timezone: 'Europe/Berlin', input: {} });
      await store.schedules.createSchedule(T, a);
      await store.schedules.createSchedule(T, b);
      expect(await store.schedules.getSchedule(T, a.id)).toEqual(a);
      expect(await store.schedules.getSchedule(T, b.id)).toEqual(b);
      expect(await store.schedules.updateSchedule(T, a.id, { on_run_completed: 'keep' })).toEqual({ ...a, on_run_completed: 'keep' });
      a.on_run_completed = 'keep';
      expect((await store.schedules.listSchedules(T, PAGE)).map((s) => s.id)).toEqual([b.id, a.id]);
      expect((await store.schedules.listSchedules(T, { limit: 1, offset: 1 })).map((s) => s.id)).toEqual([a.id]);
    });

    it('scopes every read and write to the tenant', async () => {
      const store = await makeStore();
      const a = schedule();
      await store.schedules.createSchedule(T, a);
      expect(await store.schedules.getSchedule(OTHER, a.id)).toBeNull();
      expect(await store.schedules.listSchedules(OTHER, PAGE)).toEqual([]);
      expect(await store.schedules.beginScheduleFire(OTHER, a.id, fire(1))).toBe('gone');
      expect(await store.schedules.listScheduleHistory(OTHER, a.id)).toEqual([]);
      expect(await store.schedules.deleteSchedule(OTHER, a.id)).toBe(false);
      expect(await store.schedules.getSchedule(T, a.id)).toEqual(a);
    });

    it('lists every schedule of every tenant for reconciliation', async () => {
      const store = await makeStore();
      const a = schedule();
      const b = schedule();
      await store.schedules.createSchedule(T, a);
      await store.schedules.createSchedule(OTHER, b);
      const all = await store.schedules.listAllSchedules();
      expect(all).toEqual(expect.arrayContaining([{ tenant: T, schedule: a }, { tenant: OTHER, schedule: b }]));
      await store.schedules.deleteSchedule(T, a.id);
      expect((await store.schedules.listAllSchedules()).map((s) => s.schedule.id)).not.toContain(a.id);
    });

    it('records a fire once per fire id, moves next_run, and lists history newest first', async () => {
      const store = await makeStore();
      const a = schedule();
      await store.schedules.createSchedule(T, a);
      expect(await store.schedules.beginScheduleFire(T, a.id, fire(1))).toBe('begun');
      expect(await store.schedules.beginScheduleFire(T, a.id, fire(1, { session_id: 'other' }))).toBe('duplicate');
      expect(await store.schedules.beginScheduleFire(T, a.id, fire(2))).toBe('begun');
      expect((await store.schedules.getSchedule(T, a.id))!.next_run).toBe(fire(2).next_run);
      const history = await store.schedules.listScheduleHistory(T, a.id);
      expect(history).toEqual([
        { schedule_id: a.id, session_id: 'session-2', fired_at: fire(2).fired_at, due_at: fire(2).due_at, status: 'running' },
        { schedule_id: a.id, session_id: 'session-1', fired_at: fire(1).fired_at, due_at: fire(1).due_at, status: 'running' },
      ]);
      expect(await store.schedules.beginScheduleFire(T, 'missing', fire(3))).toBe('gone');
    });

    it('settles a record through its run, and completed or failed is final', async () => {
      const store = await makeStore();
      const a = schedule();
      await store.schedules.createSchedule(T, a);
      await store.schedules.beginScheduleFire(T, a.id, fire(1));
      await store.schedules.updateScheduleFire(T, a.id, fire(1).fire_id, { run_id: 'run-1' });
      expect(await store.schedules.settleScheduleRun(T, { id: 'run-1', status: 'running' })).toBeNull();
      expect(await store.schedules.settleScheduleRun(T, { id: 'run-1', status: 'interrupted' })).toBe(a.id);
      expect((await store.schedules.listScheduleHistory(T, a.id))[0]).toMatchObject({ status: 'interrupted', run_id: 'run-1' });
      expect(await store.schedules.settleScheduleRun(OTHER, { id: 'run-1', status: 'completed' })).toBeNull();
      expect(await store.schedules.settleScheduleRun(T, { id: 'run-1', status: 'failed', error: 'boom' })).toBe(a.id);
      expect((await store.schedules.listScheduleHistory(T, a.id))[0]).toMatchObject({ status: 'failed', run_id: 'run-1', error: 'boom' });
      // Final: neither a late status nor the (now dropped) run link changes it.
      await store.schedules.updateScheduleFire(T, a.id, fire(1).fire_id, { status: 'interrupted' });
      expect(await store.schedules.settleScheduleRun(T, { id: 'run-1', status: 'completed' })).toBeNull();
      expect((await store.schedules.listScheduleHistory(T, a.id))[0]).toMatchObject({ status: 'failed', error: 'boom' });
    });

    it('records a skipped tick without a run, and ignores updates of unknown records', async () => {
      const store = await makeStore();
      const a = schedule({ new_session: false, session_id: 'reused' });
      await store.schedules.createSchedule(T, a);
      await store.schedules.beginScheduleFire(T, a.id, fire(1, { session_id: 'reused' }));
      await store.schedules.updateScheduleFire(T, a.id, fire(1).fire_id, { status: 'skipped' });
      await store.schedules.updateScheduleFire(T, a.id, 'nope', { status: 'completed' });
      await store.schedules.updateScheduleFire(T, 'nope', fire(1).fire_id, { status: 'completed' });
      const [record] = await store.schedules.listScheduleHistory(T, a.id);
      expect(record).toEqual({ schedule_id: a.id, session_id: 'reused', fired_at: fire(1).fired_at, due_at: fire(1).due_at, status: 'skipped' });
    });

    it('refuses a schedule past the tenant’s limit with conflict, storing nothing, atomically; other tenants have their own', async () => {
      const store = await makeStore();
      await store.schedules.createSchedule(T, schedule(), 2);
      await store.schedules.createSchedule(T, schedule(), 2);
      const refused = schedule();
      await expect(store.schedules.createSchedule(T, refused, 2)).rejects.toMatchObject({ code: 'conflict', message: expect.stringMatching(/SERVICE_SCHEDULES_MAX_PER_TENANT/) });
      expect(await store.schedules.getSchedule(T, refused.id)).toBeNull();
      expect((await store.schedules.listAllSchedules()).map((s) => s.schedule.id)).not.toContain(refused.id);
      await store.schedules.createSchedule(OTHER, schedule(), 2);
      await store.schedules.createSchedule(T, schedule());
      const racing = await Promise.allSettled([schedule(), schedule(), schedule()].map((s) => store.schedules.createSchedule(OTHER, s, 3)));
      expect(racing.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
      expect(await store.schedules.listSchedules(OTHER, { limit: 10, offset: 0 })).toHaveLength(3);
    });

    it(`keeps the newest ${SCHEDULE_HISTORY_LIMIT} records and unlinks the runs of dropped ones`, async () => {
      const store = await makeStore();
      const a = schedule();
      await store.schedules.createSchedule(T, a);
      for (let n = 1; n <= SCHEDULE_HISTORY_LIMIT + 5; n += 1) {
        await store.schedules.beginScheduleFire(T, a.id, fire(n));
        await store.schedules.updateScheduleFire(T, a.id, fire(n).fire_id, { run_id: `run-${n}` });
      }
      const history = await store.schedules.listScheduleHistory(T, a.id);
      expect(history).toHaveLength(SCHEDULE_HISTORY_LIMIT);
      expect(history[0]!.run_id).toBe(`run-${SCHEDULE_HISTORY_LIMIT + 5}`);
      expect(history.at(-1)!.run_id).toBe('run-6');
      expect(await store.schedules.settleScheduleRun(T, { id: 'run-5', status: 'completed' })).toBeNull();
      expect(await store.schedules.settleScheduleRun(T, { id: 'run-6', status: 'completed' })).toBe(a.id);
    });

    it('keeps the optional fields as given; updateSchedule changes the fields given, end_time null removes it', async () => {
      const store = await makeStore();
      const a = schedule({
        new_session: false,
        session_id: 'thread-1',
        end_time: '2026-12-01T00:00:00.000Z',
        enabled: false,
        graph: { input: { messages: [{ role: 'user', content: 'ünï "q"' }] }, config: { tags: ['a'] }, interrupt_before: '*' },
        multitask: 'enqueue',
        metadata: { owner: 'me', n: 1.5, nested: { list: [null, true] } },
        webhook: 'https://hooks.example.com/cron?token=a b',
      });
      const plain = schedule();
      await store.schedules.createSchedule(T, a);
      await store.schedules.createSchedule(T, plain);
      expect(await store.schedules.getSchedule(T, a.id)).toEqual(a);
      expect(await store.schedules.getSchedule(T, plain.id)).toEqual(plain);

      const patch = {
        cron_expr: '0 9 * * 1-5',
        timezone: 'Europe/Berlin',
        next_run: '2026-11-23T08:00:00.000Z',
        enabled: true,
        graph: { input: { text: 'new' } },
        metadata: { owner: 'you' },
        webhook: 'https://other.example.com/',
        updated_at: '2026-11-21T11:00:00.000Z',
      };
      const changed = { ...a, ...patch };
      expect(await store.schedules.updateSchedule(T, a.id, patch)).toEqual(changed);
      expect(await store.schedules.getSchedule(T, a.id)).toEqual(changed);
      const { end_time: _removed, ...ended } = changed;
      expect(await store.schedules.updateSchedule(T, a.id, { end_time: null })).toEqual(ended);
      expect(await store.schedules.updateSchedule(T, a.id, { end_time: '2027-01-01T00:00:00.000Z', input: { x: 1 } })).toEqual({
        ...ended,
        end_time: '2027-01-01T00:00:00.000Z',
        input: { x: 1 },
      });
      expect(await store.schedules.getSchedule(T, plain.id)).toEqual(plain);
      expect(await store.schedules.updateSchedule(OTHER, a.id, { enabled: false })).toBeNull();
      expect(await store.schedules.updateSchedule(T, 'missing', { enabled: false })).toBeNull();
      expect(await store.schedules.getSchedule(T, 'missing')).toBeNull();
      await store.schedules.deleteSchedule(T, a.id);
      expect(await store.schedules.updateSchedule(T, a.id, { enabled: true })).toBeNull();
      expect(await store.schedules.getSchedule(T, a.id)).toBeNull();
    });

    it('deletes a schedule with its history and run links; a second delete finds nothing', async () => {
      const store = await makeStore();
      const a = schedule();
      const b = schedule();
      await store.schedules.createSchedule(T, a);
      await store.schedules.createSchedule(T, b);
      await store.schedules.beginScheduleFire(T, a.id, fire(1));
      await store.schedules.updateScheduleFire(T, a.id, fire(1).fire_id, { run_id: 'run-a' });
      expect(await store.schedules.deleteSchedule(T, a.id)).toBe(true);
      expect(await store.schedules.deleteSchedule(T, a.id)).toBe(false);
      expect(await store.schedules.getSchedule(T, a.id)).toBeNull();
      expect(await store.schedules.listScheduleHistory(T, a.id)).toEqual([]);
      expect(await store.schedules.settleScheduleRun(T, { id: 'run-a', status: 'completed' })).toBeNull();
      expect(await store.schedules.beginScheduleFire(T, a.id, fire(2))).toBe('gone');
      expect((await store.schedules.listSchedules(T, PAGE)).map((s) => s.id)).toEqual([b.id]);
    });
  });
}
