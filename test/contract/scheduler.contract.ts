import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { Schedule } from '../../src/domain/types.js';
import type { ScheduleConsumer, ScheduleFire, ScheduleTrigger, Scheduler } from '../../src/ports/scheduler.js';
import type { Store } from '../../src/ports/store.js';
import { reconcileSchedules } from '../../src/runtime/schedule-control.js';
import { waitFor } from '../support/wait.js';

/** A fresh scheduler, a consumer of its fires, and a store of the same backend. */
export type SchedulerFactory = () => Promise<{ scheduler: Scheduler; consumer: ScheduleConsumer; store: Store }>;

/** A trigger of tenant acme every five minutes in UTC, with overrides. Tenant hooli lands on another master of the test Redis Cluster. */
export const trigger = (id: string, overrides: Partial<ScheduleTrigger> = {}): ScheduleTrigger => ({
  schedule_id: id,
  tenant: 'acme',
  cron_expr: '*/5 * * * *',
  timezone: 'UTC',
  ...overrides,
});

const schedule = (id: string, cron_expr = '*/5 * * * *'): Schedule => ({
  id,
  agent_id: 'echo',
  cron_expr,
  input: {},
  new_session: true,
  timezone: 'UTC',
  next_run: '2026-11-21T10:05:00.000Z',
  created_at: '2026-11-21T10:00:00.000Z',
});

/**
 * The Scheduler port's behaviour, run against both adapters: triggers (upsert, list, remove),
 * fires delivered to a started consumer, and reconciliation with the stored schedules.
 */
export function schedulerContract(name: string, make: SchedulerFactory): void {
  describe(`Scheduler contract: ${name}`, () => {
  it('upserts (idempotently, updating the cadence), lists and removes triggers', async () => {
    const { scheduler, consumer } = await make();
    onTestFinished(async () => {
      await consumer.close();
      await scheduler.close();
    });
    await scheduler.upsert(trigger('a'));
    await scheduler.upsert(trigger('a'));
    await scheduler.upsert(trigger('b', { cron_expr: '0 9 * * MON-FRI', timezone: 'Europe/Berlin', tenant: 'hooli' }));
    expect(await scheduler.list()).toHaveLength(2);
    expect(await scheduler.list()).toEqual(
      expect.arrayContaining([trigger('a'), trigger('b', { cron_expr: '0 9 * * MON-FRI', timezone: 'Europe/Berlin', tenant: 'hooli' })]),
    );
    await scheduler.upsert(trigger('a', { cron_expr: '0 * * * *' }));
    expect(await scheduler.list()).toContainEqual(trigger('a', { cron_expr: '0 * * * *' }));
    await scheduler.remove('a');
    await scheduler.remove('missing');
    expect((await scheduler.list()).map((t) => t.schedule_id)).toEqual(['b']);
  });

  it('reconciles: a stored schedule without its trigger gets it, an orphan trigger goes, a matching one is untouched', async () => {
    const { scheduler, consumer, store } = await make();
    onTestFinished(async () => {
      await consumer.close();
      await scheduler.close();
    });
    await store.schedules.createSchedule('acme', schedule('missing-trigger'));
    await store.schedules.createSchedule('acme', schedule('matching'));
    await store.schedules.createSchedule('hooli', schedule('other-cadence', '0 0 * * *'));
    await scheduler.upsert(trigger('matching'));
    await scheduler.upsert(trigger('other-cadence', { tenant: 'hooli' }));
    await scheduler.upsert(trigger('orphan'));
    const upsert = vi.spyOn(scheduler, 'upsert');
    expect(await reconcileSchedules(store, scheduler)).toEqual({ schedules: 3, upserted: 2, removed: 1, failed: 0, errors: [] });
    expect(upsert.mock.calls.map(([t]) => t.schedule_id).sort()).toEqual(['missing-trigger', 'other-cadence']);
    expect((await scheduler.list()).sort((a, b) => a.schedule_id.localeCompare(b.schedule_id))).toEqual([
      trigger('matching'),
      trigger('missing-trigger'),
      trigger('other-cadence', { tenant: 'hooli', cron_expr: '0 0 * * *' }),
    ]);
    expect(await reconcileSchedules(store, scheduler)).toEqual({ schedules: 3, upserted: 0, removed: 0, failed: 0, errors: [] });
    // One trigger that cannot be written does not stop the others.
    await store.schedules.createSchedule('acme', schedule('later'));
    await scheduler.remove('matching');
    upsert.mockRejectedValueOnce(new Error('boom'));
    const report = await reconcileSchedules(store, scheduler);
    expect(report).toMatchObject({ schedules: 4, upserted: 1, failed: 1, errors: [new Error('boom')] });
    expect(await reconcileSchedules(store, scheduler)).toMatchObject({ upserted: 1, failed: 0 });
    expect((await scheduler.list()).map((t) => t.schedule_id).sort()).toEqual(['later', 'matching', 'missing-trigger', 'other-cadence']);
  });

  it('delivers each tick of a trigger once to a started consumer, with its tenant and due time, until removed', async () => {
    const { scheduler, consumer } = await make();
    onTestFinished(async () => {
      await consumer.close();
      await scheduler.close();
    });
    const fires: (ScheduleFire & { at: number })[] = [];
    consumer.start(async (fire) => void fires.push({ ...fire, at: Date.now() }));
    // A seconds field (refused by the API's validation) makes ticks one second apart here.
    await scheduler.upsert(trigger('every-second', { cron_expr: '* * * * * *', tenant: 'hooli' }));
    await waitFor('three ticks', () => fires.length >= 3, 15_000);
    await scheduler.remove('every-second');
    const ticks = fires.map((f) => f.due_ms);
    expect(new Set(ticks).size).toBe(ticks.length);
    expect(ticks.every((t) => t % 1000 === 0)).toBe(true);
    expect(fires.every((f) => f.schedule_id === 'every-second' && f.tenant === 'hooli' && f.at >= f.due_ms)).toBe(true);

    const removedAt = Date.now();
    // Ticks go on for another trigger: two of its fires prove the removed one had its chances.
    await scheduler.upsert(trigger('witness', { cron_expr: '* * * * * *' }));
    await waitFor('two ticks of another trigger', () => fires.filter((f) => f.schedule_id === 'witness').length >= 2, 15_000);
    await scheduler.remove('witness');
    // A tick already taken when the trigger went may still finish; none due after it fires.
    expect(fires.filter((f) => f.schedule_id === 'every-second' && f.due_ms > removedAt)).toEqual([]);
  });
});
}
