import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { MemoryScheduler } from '../../src/adapters/memory/scheduler.js';
import { BullScheduleConsumer, BullScheduler } from '../../src/adapters/redis/scheduler.js';
import type { ScheduleFire } from '../../src/ports/scheduler.js';
import { trigger } from '../contract/scheduler.contract.js';
import { uniquePrefix, useRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

// The Scheduler contract (both adapters) is test/contract/scheduler.test.ts; these are each adapter's own.

const redis = useRedis();
const bull = () => redis.connect({ maxRetriesPerRequest: null });


describe('MemoryScheduler timers', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const fakeClock = (iso: string) => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    vi.setSystemTime(new Date(iso));
  };

  it('fires every tick at its due time, in the trigger’s time zone, until removed', async () => {
    fakeClock('2026-07-01T06:58:30.000Z');
    const fires: (ScheduleFire & { at: number })[] = [];
    const scheduler = new MemoryScheduler();
    scheduler.start(async (fire) => {
      fires.push({ ...fire, at: Date.now() });
    });
    await scheduler.upsert(trigger('minutely', { cron_expr: '* * * * *' }));
    await scheduler.upsert(trigger('berlin', { cron_expr: '0 9 * * *', timezone: 'Europe/Berlin' }));
    await vi.advanceTimersByTimeAsync(29_999);
    expect(fires).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await vi.advanceTimersByTimeAsync(60_000);
    // 09:00 in Berlin (summer time) is 07:00 UTC.
    expect(fires.map((f) => [f.schedule_id, new Date(f.due_ms).toISOString()]).sort()).toEqual([
      ['berlin', '2026-07-01T07:00:00.000Z'],
      ['minutely', '2026-07-01T06:59:00.000Z'],
      ['minutely', '2026-07-01T07:00:00.000Z'],
    ]);
    expect(fires.every((f) => f.at === f.due_ms && f.tenant === 'acme')).toBe(true);
    await scheduler.remove('minutely');
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    expect(fires).toHaveLength(3);
    await scheduler.close();
  });

  it('drops ticks while no handler is started, and stops at close', async () => {
    fakeClock('2026-07-01T07:00:30.000Z');
    const scheduler = new MemoryScheduler();
    await scheduler.upsert(trigger('t', { cron_expr: '* * * * *' }));
    await vi.advanceTimersByTimeAsync(2 * 60_000);
    const due: string[] = [];
    scheduler.start(async (fire) => {
      due.push(new Date(fire.due_ms).toISOString());
    });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(due).toEqual(['2026-07-01T07:03:00.000Z']);
    await scheduler.close();
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    expect(due).toHaveLength(1);
    await expect(scheduler.upsert(trigger('late'))).rejects.toThrow(/closed/);
  });
});

describe('BullMQ job schedulers', () => {
  it('deliver each tick to exactly one of two consumers, with the tick as due_ms', async () => {
    const prefix = uniquePrefix();
    const scheduler = new BullScheduler({ connection: bull(), prefix });
    const consumers = [0, 1].map(() => new BullScheduleConsumer({ connection: bull(), prefix, concurrency: 5 }));
    onTestFinished(async () => {
      await Promise.all(consumers.map((c) => c.close()));
      await scheduler.close();
    });
    const fires: { consumer: number; fire: ScheduleFire; at: number }[] = [];
    consumers.forEach((consumer, i) => consumer.start(async (fire) => void fires.push({ consumer: i, fire, at: Date.now() })));
    // A seconds field (refused by the API's validation) makes ticks one second apart here.
    await scheduler.upsert(trigger('every-second', { cron_expr: '* * * * * *' }));
    await scheduler.upsert(trigger('other', { cron_expr: '* * * * * *' }));
    await waitFor('six ticks of each trigger', () => fires.filter((f) => f.fire.schedule_id === 'other').length >= 6 && fires.filter((f) => f.fire.schedule_id === 'every-second').length >= 6, 20_000);
    await scheduler.remove('every-second');
    await scheduler.remove('other');
    for (const id of ['every-second', 'other']) {
      const ticks = fires.filter((f) => f.fire.schedule_id === id).map((f) => f.fire.due_ms);
      expect(new Set(ticks).size).toBe(ticks.length);
      expect(ticks.every((t) => t % 1000 === 0)).toBe(true);
    }
    expect(fires.every((f) => f.at >= f.fire.due_ms && f.fire.tenant === 'acme')).toBe(true);
  });

  it('fire once, late, for the ticks missed while no consumer ran, then keep the cadence', async () => {
    const prefix = uniquePrefix();
    const scheduler = new BullScheduler({ connection: bull(), prefix });
    const consumer = new BullScheduleConsumer({ connection: bull(), prefix });
    onTestFinished(async () => {
      await consumer.close();
      await scheduler.close();
    });
    await scheduler.upsert(trigger('t', { cron_expr: '* * * * * *' }));
    const firstDue = Math.ceil((Date.now() + 1) / 1000) * 1000;
    // No consumer while three ticks pass.
    await new Promise((r) => setTimeout(r, firstDue + 3000 - Date.now()));
    const fires: { due: number; at: number }[] = [];
    consumer.start(async (fire) => void fires.push({ due: fire.due_ms, at: Date.now() }));
    await waitFor('three fires', () => fires.length >= 3, 10_000);
    await scheduler.remove('t');
    const [late, ...rest] = fires;
    expect(late!.due).toBe(firstDue);
    expect(late!.at - late!.due).toBeGreaterThanOrEqual(3000);
    // The other missed ticks are not replayed: the next fires belong to ticks after the consumer started.
    const missed = [1000, 2000, 3000].map((ms) => firstDue + ms);
    expect(rest.filter((f) => missed.includes(f.due))).toEqual([]);
    expect(rest[0]!.due).toBeGreaterThanOrEqual(firstDue + 4000);
    expect(rest[1]!.due).toBeGreaterThan(rest[0]!.due);
  });
});
