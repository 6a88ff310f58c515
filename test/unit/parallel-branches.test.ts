import type { LangGraphRunnableConfig } from '@langchain/langgraph';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { meeting, parallelBranches } from '../support/langgraph.js';

/**
 * The helpers that prove a graph's branches run at once (test/support/langgraph.ts) prove it by
 * meeting, not by a clock: a branch waits for the other however late a loaded machine starts
 * it, and stops waiting only when its run is stopped. Time here is vitest's fake clock.
 */

afterEach(() => {
  vi.useRealTimers();
});

/** Whether `promise` settled yet: `'pending'`, `'met'`, or the error it failed with. */
function watch(promise: Promise<unknown>): () => unknown {
  let state: unknown = 'pending';
  promise.then(
    () => (state = 'met'),
    (error: unknown) => (state = error),
  );
  return () => state;
}

describe('meeting', () => {
  it('holds a branch until the other arrives, however late: no bound of its own', async () => {
    vi.useFakeTimers();
    const meet = meeting(2);
    const left = watch(meet('left'));
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(left()).toBe('pending');
    await meet('right');
    await vi.advanceTimersByTimeAsync(0);
    expect(left()).toBe('met');
  });

  it('lets a branch left alone go once its run is stopped, saying the branches did not run in parallel', async () => {
    const stop = new AbortController();
    const left = meeting(2)('left', stop.signal);
    stop.abort(new Error('run cancelled'));
    await expect(left).rejects.toThrow(/branch left .* the branches did not run in parallel/);
  });
});

describe('parallelBranches', () => {
  it('waits for the engine to announce both starts however long it trails the graph', async () => {
    vi.useFakeTimers();
    let announced = 1;
    const branch = parallelBranches(async () => announced);
    const config = { configurable: { run_id: 'r1' } } as LangGraphRunnableConfig;
    const left = branch('left')({ topic: 'tea' }, config);
    const right = branch('right')({ topic: 'tea' }, config);
    const states = [watch(left), watch(right)];
    await vi.advanceTimersByTimeAsync(60_000);
    expect(states.map((state) => state())).toEqual(['pending', 'pending']);
    announced = 2;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await Promise.all([left, right])).toEqual([{ parts: ['left:tea'] }, { parts: ['right:tea'] }]);
  });
});
