import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { expect, it } from 'vitest';
import { MemoryEventBus } from '../../src/adapters/memory/event-bus.js';
import { MemoryRunQueue } from '../../src/adapters/memory/run-queue.js';
import { MemoryStore } from '../../src/adapters/memory/store.js';
import { RedisStore } from '../../src/adapters/redis/store.js';
import type { Store } from '../../src/ports/store.js';
import { RunLifecycle } from '../../src/runtime/run-lifecycle.js';
import { uniquePrefix, useRedis } from '../support/redis.js';

const redis = useRedis();
const T = 'tenant-q';

/**
 * A run queued behind whose input no longer fits when its turn comes ends like any failed run
 * (event, root span), and the next one in line starts: on both stores.
 */
for (const [name, make] of [
  ['memory', () => new MemoryStore({ limits: { maxStateKeys: 3 } })],
  ['redis', () => new RedisStore(redis.connect(), { keyPrefix: uniquePrefix('behind'), limits: { maxStateKeys: 3 } })],
] as const) {
  it(`a run queued behind that no longer fits fails with its event, and the next starts: ${name}`, async () => {
    const store: Store = make();
    const events = new MemoryEventBus(100);
    const queue = new MemoryRunQueue();
    const lifecycle = new RunLifecycle({ store, events, queue, logger: pino({ level: 'silent' }) });
    const session = randomUUID();
    const create = (input: Record<string, unknown>, behind: boolean) =>
      store.runs.createRun(T, { run_id: randomUUID(), session_id: session, agent_id: 'echo', start: { node_id: 'receive', input }, behind });
    const active = await create({ a: 1 }, false);
    const tooBig = await create({ b: 1, c: 1, d: 1 }, true);
    const next = await create({ a: 2 }, true);
    const ended = await lifecycle.end(T, active.id, { status: 'cancelled', error: 'cancelled' });
    expect(ended).not.toHaveProperty('queued_behind');
    expect(await store.runs.getRun(T, tooBig.id)).toMatchObject({ status: 'failed', error: expect.stringMatching(/key limit/) });
    const published = (await events.readAfter(T, '0-0', 100)).map((e) => [e.event.run_id, e.event.type]);
    expect(published).toEqual([
      [active.id, 'cancelled'],
      [tooBig.id, 'failed'],
    ]);
    const spans = (await store.sessions.listSpans(T, session, { limit: 10, offset: 0 })).map((s) => `${s.span_id} ${String(s.attributes.status)}`);
    expect(spans.sort()).toEqual([`${active.id} cancelled`, `${tooBig.id} failed`].sort());
    expect(await store.runs.latestRun(T, session)).toMatchObject({ id: next.id, status: 'queued' });
    expect(await queue.hasLiveJob({ id: next.id })).toBe(true);
  });
}
