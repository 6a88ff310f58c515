import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { MemoryEventBus } from '../../src/adapters/memory/event-bus.js';
import type { Run, RunEvent, StoredEvent } from '../../src/domain/types.js';
import { RunFollower } from '../../src/runtime/run-follower.js';
import { RunWatch } from '../../src/runtime/run-watch.js';

const T = 'tenant-f';
const run = { run_id: 'run-1', session_id: 'session-1', agent_id: 'human-review', ts: '2026-11-24T00:00:00.000Z' };
const event = (fields: Partial<RunEvent> & Pick<RunEvent, 'type'>): RunEvent => ({ ...run, ...fields }) as RunEvent;

/**
 * The follower a wait answers from (POST /api/runs/wait, respond with wait_ms): a run's next
 * stop, from events held while the run was being started and from live ones.
 */
describe('RunFollower', () => {
  it('stops at the first stop event of the run it follows, whether held before follow() or live, and ignores other runs', async () => {
    const bus = new MemoryEventBus(100);
    const follower = new RunFollower(bus, T);
    await bus.publish(T, event({ type: 'node_start', node: 'draft' }));
    await bus.publish(T, { ...event({ type: 'completed' }), run_id: 'other-run' });
    follower.follow('run-1');
    // The first stop is the one published last: none of those before it counted.
    await bus.publish(T, event({ type: 'interrupted', node: 'review', approval_id: 'run-1.2' }));
    expect((await follower.nextStop()).event).toMatchObject({ type: 'interrupted', approval_id: 'run-1.2' });
    follower.close();
  });

  it('passes over a stale stop named by follow(): the interrupted of the approval being answered, delivered after the answer', async () => {
    const bus = new MemoryEventBus(100);
    const seen: string[] = [];
    const follower = new RunFollower(bus, T, { onEvent: (e) => seen.push(e.event.type) });
    // Subscribed, then the answer: the run's own `interrupted` for that approval arrives late.
    follower.follow('run-1', (e) => e.event.type === 'interrupted' && e.event.approval_id === 'run-1.2');
    await bus.publish(T, event({ type: 'interrupted', node: 'review', approval_id: 'run-1.2' }));
    await bus.publish(T, event({ type: 'approval_decided', approval_id: 'run-1.2', approved: true, by: 'ana' }));
    await bus.publish(T, event({ type: 'node_end', node: 'review', status: 'ok' }));
    // The next approval of the same run is a stop, the first: the stale one did not count.
    await bus.publish(T, event({ type: 'interrupted', node: 'confirm', approval_id: 'run-1.3' }));
    expect((await follower.nextStop()).event).toMatchObject({ type: 'interrupted', approval_id: 'run-1.3' });
    // Every event of the run was passed on, the stale one too.
    expect(seen).toEqual(['interrupted', 'approval_decided', 'node_end', 'interrupted']);
    follower.close();
  });

  it('without the stale test, that late interrupted would answer the wait: the run as it stood, not its next stop', async () => {
    const bus = new MemoryEventBus(100);
    const follower = new RunFollower(bus, T);
    follower.follow('run-1');
    await bus.publish(T, event({ type: 'interrupted', node: 'review', approval_id: 'run-1.2' }));
    await bus.publish(T, event({ type: 'completed' }));
    expect((await follower.nextStop()).event.type).toBe('interrupted');
    follower.close();
  });

  it('ends with `gone` when its watch finds the run missing; a stop that came first is the answer, and the run is no longer watched', async () => {
    const bus = new MemoryEventBus(100);
    const existing = new Set<string>();
    const watch = new RunWatch({
      runs: { getRun: async (_tenant, id) => (existing.has(id) ? ({ id } as Run) : null) },
      intervalMs: 10,
      logger: pino({ enabled: false }),
    });
    let told = 0;
    const vanished = new RunFollower(bus, T, { watch, onGone: () => (told += 1) });
    vanished.follow('run-1');
    await expect(vanished.nextStop()).rejects.toMatchObject({ code: 'gone', message: expect.stringContaining('run-1') });
    expect(told).toBe(1);
    vanished.close();

    existing.add('run-2');
    const stopped = new RunFollower(bus, T, { watch, onGone: () => (told += 1) });
    stopped.follow('run-2');
    expect(watch.size).toBe(1);
    await bus.publish(T, { ...event({ type: 'completed' }), run_id: 'run-2' });
    expect(((await stopped.nextStop()) as StoredEvent).event.type).toBe('completed');
    expect(watch.size).toBe(0);
    existing.delete('run-2');
    expect(told).toBe(1);
    stopped.close();
  });
});
