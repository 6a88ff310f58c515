import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { expect, it } from 'vitest';
import { MemoryEventBus } from '../../src/adapters/memory/event-bus.js';
import { MemoryRunQueue } from '../../src/adapters/memory/run-queue.js';
import { MemoryStore } from '../../src/adapters/memory/store.js';
import { RedisStore } from '../../src/adapters/redis/store.js';
import type { Store } from '../../src/ports/store.js';
import { createReaper } from '../../src/runtime/reaper.js';
import { RunLifecycle } from '../../src/runtime/run-lifecycle.js';
import { uniquePrefix, useRedis } from '../support/redis.js';

const redis = useRedis();
const T = 'tenant-r';
/** Longer than the test: the lease taken by the first pass holds throughout. */
const EVERY_MS = 60_000;

/**
 * `agentplane_runs_stuck` summed over workers: only the worker whose pass held the reaper lease
 * reports stuck runs; the others report 0, whatever they found when they last held it. Two
 * reapers (two workers) on one store, on both stores.
 */
for (const [name, make] of [
  ['memory', () => new MemoryStore()],
  ['redis', () => new RedisStore(redis.connect(), { keyPrefix: uniquePrefix('reaper') })],
] as const) {
  it(`a worker that no longer holds the reaper lease reports 0 stuck runs: ${name}`, async () => {
    const store: Store = make();
    const events = new MemoryEventBus(100);
    const queue = new MemoryRunQueue();
    const logger = pino({ level: 'silent' });
    const lifecycle = new RunLifecycle({ store, events, queue, logger });
    const gauges = { a: -1, b: -1 };
    // The runs are inspected as if they had sat unchanged for a while.
    const clock = () => Date.now() + 2 * EVERY_MS;
    const reaper = (worker: 'a' | 'b') =>
      createReaper({ store, queue, lifecycle, logger, everyMs: EVERY_MS, clock, onStuck: (count) => (gauges[worker] = count) });
    const a = reaper('a');
    const b = reaper('b');
    // A run created with no job: stuck.
    const run = await store.runs.createRun(T, { run_id: randomUUID(), session_id: randomUUID(), agent_id: 'echo', start: { node_id: 'receive', input: {} } });

    expect(await a.pass()).toBe(1);
    expect(gauges.a).toBe(1);
    expect(await store.runs.getRun(T, run.id)).toMatchObject({ status: 'failed' });
    // B's pass while A holds the lease: nothing done, nothing reported.
    expect(await b.pass()).toBe(0);
    expect(gauges.b).toBe(0);
    // A's next pass does not get the lease either (it lapses only after EVERY_MS): it reports 0,
    // not the 1 its last pass found, so the sum over workers no longer counts the ended run.
    expect(await a.pass()).toBe(0);
    expect(gauges).toEqual({ a: 0, b: 0 });
  });
}
