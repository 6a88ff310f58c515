import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_TIMER_MS, setLongTimeout } from '../../src/domain/long-timer.js';

/**
 * setLongTimeout: a delay past setTimeout's 2^31-1 ms fires when due, not at once (on the fake
 * clock, which, as Node does, runs a longer setTimeout after 1 ms); with a short `maxTimerMs`,
 * on the real clock, it re-arms until due; clear() cancels it at any step.
 */

const DAY_MS = 86_400_000;

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('setLongTimeout', () => {
  it('waits 30 days where one setTimeout would fire at once', () => {
    vi.useFakeTimers();
    const plain = vi.fn();
    const long = vi.fn();
    setTimeout(plain, 30 * DAY_MS);
    setLongTimeout(long, 30 * DAY_MS);
    vi.advanceTimersByTime(10);
    expect(plain).toHaveBeenCalledOnce(); // the overflow this helper is for
    vi.advanceTimersByTime(MAX_TIMER_MS + 1_000);
    expect(long).not.toHaveBeenCalled();
    vi.advanceTimersByTime(30 * DAY_MS - MAX_TIMER_MS - 1_000 - 10 - 1);
    expect(long).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(long).toHaveBeenCalledOnce();
    vi.advanceTimersByTime(60 * DAY_MS);
    expect(long).toHaveBeenCalledOnce();
  });

  it('fires a short delay as setTimeout does, and at once for 0, a negative or no finite delay', () => {
    vi.useFakeTimers();
    const fired: string[] = [];
    setLongTimeout(() => fired.push('100'), 100);
    for (const delay of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) setLongTimeout(() => fired.push(String(delay)), delay);
    vi.advanceTimersByTime(0);
    expect(fired).toEqual(['0', '-5', 'NaN', 'Infinity']);
    vi.advanceTimersByTime(99);
    expect(fired).toHaveLength(4);
    vi.advanceTimersByTime(1);
    expect(fired.at(-1)).toBe('100');
  });

  it('clear() cancels it before its first step and between two steps', () => {
    vi.useFakeTimers();
    const early = vi.fn();
    const between = vi.fn();
    setLongTimeout(early, 40 * DAY_MS).clear();
    const timer = setLongTimeout(between, 40 * DAY_MS);
    vi.advanceTimersByTime(MAX_TIMER_MS + 5);
    timer.clear();
    vi.advanceTimersByTime(80 * DAY_MS);
    expect(early).not.toHaveBeenCalled();
    expect(between).not.toHaveBeenCalled();
  });

  it('with a short maxTimerMs on the real clock: re-arms step by step and fires no sooner than due, unref\'d when asked', async () => {
    const armed = vi.spyOn(globalThis, 'setTimeout');
    const started = Date.now();
    const firedAt = await new Promise<number>((resolve) => setLongTimeout(() => resolve(Date.now()), 120, { maxTimerMs: 20, unref: true }));
    expect(firedAt - started).toBeGreaterThanOrEqual(120);
    const steps = armed.mock.calls.flatMap(([, ms], i) => (typeof ms === 'number' && ms <= 20 ? [armed.mock.results[i]!.value as NodeJS.Timeout] : []));
    // Several steps of at most 20 ms (fewer than 6 when a busy machine wakes them late).
    expect(steps.length).toBeGreaterThanOrEqual(2);
    expect(steps.every((timer) => !timer.hasRef())).toBe(true);
  });
});
