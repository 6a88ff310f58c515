import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AppError } from '../../src/domain/errors.js';
import type { Run } from '../../src/domain/types.js';
import { RunWatch } from '../../src/runtime/run-watch.js';

const T = 'DefaultTenant';
const INTERVAL_MS = 1_000;

/** A run store of the runs named in `existing`, counting reads; `failing` makes reads throw. */
function fakeRuns(existing: Set<string>) {
  const state = { reads: [] as string[], failing: false };
  return {
    state,
    runs: {
      async getRun(_tenant: string, runId: string): Promise<Run | null> {
        state.reads.push(runId);
        if (state.failing) throw new AppError('unavailable', 'Storage is unreachable; retry shortly.');
        return existing.has(runId) ? ({ id: runId } as Run) : null;
      },
    },
  };
}

/** Lets the reads of one check settle (they are promises, not timers). */
const settle = () => vi.advanceTimersByTimeAsync(0);

afterEach(() => {
  vi.useRealTimers();
});

describe('RunWatch', () => {
  it('reads each watched run once per interval, however many follow it, and tells all its followers once it is gone', async () => {
    vi.useFakeTimers();
    const existing = new Set(['a', 'b']);
    const { runs, state } = fakeRuns(existing);
    const watch = new RunWatch({ runs, intervalMs: INTERVAL_MS, logger: pino({ enabled: false }) });
    const gone: string[] = [];
    watch.watch(T, 'a', () => gone.push('a1'));
    watch.watch(T, 'a', () => gone.push('a2'));
    watch.watch(T, 'b', () => gone.push('b'));

    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(state.reads.sort()).toEqual(['a', 'b']);
    expect(gone).toEqual([]);

    existing.delete('a');
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    await settle();
    expect(gone).toEqual(['a1', 'a2']);
    expect(watch.size).toBe(1);

    // Told once: `a` is no longer read.
    state.reads = [];
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(state.reads).toEqual(['b']);
    expect(gone).toEqual(['a1', 'a2']);
  });

  it('reads nothing once every follower stopped watching (the timer stops)', async () => {
    vi.useFakeTimers();
    const { runs, state } = fakeRuns(new Set(['a']));
    const watch = new RunWatch({ runs, intervalMs: INTERVAL_MS, logger: pino({ enabled: false }) });
    const stops = [watch.watch(T, 'a', () => {}), watch.watch(T, 'a', () => {})];
    stops[0]!();
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(state.reads).toEqual(['a']);
    stops[1]!();
    stops[1]!();
    expect(watch.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('takes a read that fails (storage unreachable) for no answer: the run is read again, nobody is told', async () => {
    vi.useFakeTimers();
    const { runs, state } = fakeRuns(new Set());
    const warnings: unknown[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line)) });
    const watch = new RunWatch({ runs, intervalMs: INTERVAL_MS, logger });
    const gone: string[] = [];
    watch.watch(T, 'a', () => gone.push('a'));
    state.failing = true;
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    await settle();
    expect(gone).toEqual([]);
    expect(warnings).toHaveLength(1);

    state.failing = false;
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    await settle();
    expect(gone).toEqual(['a']);
  });
});
