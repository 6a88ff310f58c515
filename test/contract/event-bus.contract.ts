import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RunEvent, StoredEvent } from '../../src/domain/types.js';
import { compareEventIds } from '../../src/domain/event-ids.js';
import { EventSeam } from '../../src/domain/event-seam.js';
import { listenerCount } from '../support/listeners.js';
import type { EventBus } from '../../src/ports/event-bus.js';
import { waitFor } from '../support/wait.js';

/** Bytes of retained event JSON, per tenant and per run (SERVICE_EVENTS_MAX_BYTES, SERVICE_EVENTS_RUN_MAX_BYTES). */
export interface EventBytesCaps {
  maxBytes: number;
  runMaxBytes: number;
}

/**
 * A fresh EventBus retaining `retain` events per tenant, and at most `bytes` of them when given
 * (the defaults otherwise); both adapters must pass every test.
 */
export type EventBusFactory = (retain: number, bytes?: EventBytesCaps) => Promise<EventBus>;

const T = 'tenant-a';
// On the test Redis Cluster, T and OTHER land on different masters (test/cluster checks it).
const OTHER = 'tenant-c';

function event(n: number, session = 's1'): RunEvent {
  return { type: 'node_start', session, run_id: `run-${n}`, agent_id: 'echo', ts: new Date().toISOString(), node: `n${n}` };
}

/** Publishes `count` events one after the other; returns their ids. */
async function publishMany(bus: EventBus, tenant: string, count: number, from = 0): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) ids.push(await bus.publish(tenant, event(from + i)));
  return ids;
}

/** A `custom` event of `run` carrying `chars` two-byte characters (é): UTF-8 bytes are twice its UTF-16 length. */
function bigEvent(run: string, n: number, chars: number): RunEvent {
  return { type: 'custom', session: 's1', run_id: run, agent_id: 'echo', ts: new Date().toISOString(), name: `c${n}`, data: 'é'.repeat(chars) };
}

/** UTF-8 bytes of an event's JSON: what the byte caps count. */
const bytesOf = (e: StoredEvent) => Buffer.byteLength(JSON.stringify(e.event));
const sum = (events: StoredEvent[]) => events.reduce((total, e) => total + bytesOf(e), 0);

/** Every retained event of the tenant, paging through readAfter. */
async function readAll(bus: EventBus, tenant: string): Promise<StoredEvent[]> {
  const all: StoredEvent[] = [];
  for (let cursor = '0-0'; ; ) {
    const page = await bus.readAfter(tenant, cursor, 100);
    all.push(...page);
    if (page.length < 100) return all;
    cursor = page[page.length - 1]!.id;
  }
}

export function eventBusContract(name: string, makeBus: EventBusFactory): void {
  describe(`EventBus contract: ${name}`, () => {
    it('publishes with rising ids of the form <ms>-<seq> and reads after an id, oldest first, at most count', async () => {
      const bus = await makeBus(100);
      const ids = await publishMany(bus, T, 10);
      for (const id of ids) expect(id).toMatch(/^\d+-\d+$/);
      for (let i = 1; i < ids.length; i += 1) expect(compareEventIds(ids[i]!, ids[i - 1]!)).toBeGreaterThan(0);
      const after = await bus.readAfter(T, ids[3]!, 4);
      expect(after.map((e) => e.id)).toEqual(ids.slice(4, 8));
      expect(after[0]).toMatchObject({ id: ids[4], tenant: T, event: { type: 'node_start', session: 's1', node: 'n4', run_id: 'run-4' } });
      expect(await bus.readAfter(T, ids[9]!, 10)).toEqual([]);
      expect((await bus.readAfter(T, '0-0', 100)).map((e) => e.id)).toEqual(ids);
      await bus.close();
    });

    it('keeps each tenant apart, in the log and live', async () => {
      const bus = await makeBus(100);
      const seenA: string[] = [];
      const seenB: string[] = [];
      const offA = bus.subscribe(T, (e) => seenA.push(e.event.node!));
      const offB = bus.subscribe(OTHER, (e) => seenB.push(e.event.node!));
      await bus.ready(5_000);
      await publishMany(bus, T, 3);
      await publishMany(bus, OTHER, 2, 100);
      await waitFor('live events of both tenants', () => seenA.length === 3 && seenB.length === 2);
      expect(seenA).toEqual(['n0', 'n1', 'n2']);
      expect(seenB).toEqual(['n100', 'n101']);
      expect((await readAll(bus, OTHER)).map((e) => e.tenant)).toEqual([OTHER, OTHER]);
      offA();
      offB();
      await bus.close();
    });

    it('takes tenant names that are special elsewhere (EventEmitter events, Object keys) as plain names', async () => {
      const bus = await makeBus(100);
      const names = ['removeListener', 'newListener', 'error', '__proto__', 'constructor', 'hasOwnProperty'];
      const seen = new Map<string, string[]>(names.map((n) => [n, []]));
      const stops = names.map((tenant) => bus.subscribe(tenant, (e) => seen.get(tenant)!.push(e.event.run_id)));
      await bus.ready(5_000);
      // Subscribing and unsubscribing other tenants' listeners must disturb nobody.
      bus.subscribe(T, () => {})();
      for (const [i, tenant] of names.entries()) await bus.publish(tenant, event(i));
      await waitFor('every special tenant to get its own event', () => names.every((n) => seen.get(n)!.length === 1));
      for (const [i, tenant] of names.entries()) {
        expect(seen.get(tenant)).toEqual([`run-${i}`]);
        expect((await bus.readAfter(tenant, '0-0', 10)).map((e) => e.event.run_id)).toEqual([`run-${i}`]);
      }
      for (const stop of stops) stop();
      await bus.close();
    });

    it('retains the newest `retain` events per tenant and no unbounded history', async () => {
      const bus = await makeBus(10);
      const ids = await publishMany(bus, T, 600);
      const kept = (await readAll(bus, T)).map((e) => e.id);
      expect(kept).toEqual(ids.slice(-10));
      await bus.close();
    });

    it('past the count cap trims in batches: the newest `retain` always, at most 1 % more between trims', async () => {
      const bus = await makeBus(200);
      const ids = await publishMany(bus, T, 202);
      // 202 = 200 and its slack (eventCountSlack): nothing dropped yet.
      expect((await readAll(bus, T)).map((e) => e.id)).toEqual(ids);
      ids.push(...(await publishMany(bus, T, 1)));
      // One more: back to the newest 200 at once.
      expect((await readAll(bus, T)).map((e) => e.id)).toEqual(ids.slice(-200));
      ids.push(...(await publishMany(bus, T, 2)));
      expect((await readAll(bus, T)).map((e) => e.id)).toEqual(ids.slice(-202));
      await bus.close();
    });

    it('retains at most maxBytes of event JSON per tenant, counted in UTF-8 bytes, the oldest dropped first', async () => {
      const caps = { maxBytes: 20_000, runMaxBytes: 20_000 };
      const bus = await makeBus(10_000, caps);
      const ids: string[] = [];
      // Ten runs, six events each of ~2 KB of UTF-8 (~1 K UTF-16 units): 120 KB published.
      for (let i = 0; i < 60; i += 1) ids.push(await bus.publish(T, bigEvent(`run-${i % 10}`, i, 1_000)));
      const kept = await readAll(bus, T);
      expect(sum(kept)).toBeLessThanOrEqual(caps.maxBytes);
      // The newest events, and no fewer than fit: the next older one would pass the cap.
      expect(kept.map((e) => e.id)).toEqual(ids.slice(ids.length - kept.length));
      expect(sum(kept) + Buffer.byteLength(JSON.stringify(bigEvent('run-0', 0, 1_000)))).toBeGreaterThan(caps.maxBytes);
      // Events of the other tenant are not counted against this one's.
      const other = await bus.publish(OTHER, bigEvent('run-x', 0, 1_000));
      expect((await bus.readAfter(OTHER, '0-0', 10)).map((e) => e.id)).toEqual([other]);
      // Resuming after a dropped event answers what is retained after it, as past the count cap.
      expect((await bus.readAfter(T, ids[0]!, 1_000)).map((e) => e.id)).toEqual(kept.map((e) => e.id));
      // Dropping keeps up as more is published: never above the cap.
      for (let i = 60; i < 90; i += 1) ids.push(await bus.publish(T, bigEvent(`run-${i % 10}`, i, 700)));
      const later = await readAll(bus, T);
      expect(sum(later)).toBeLessThanOrEqual(caps.maxBytes);
      expect(later.at(-1)!.id).toBe(ids.at(-1));
      await bus.close();
    });

    it('retains at most runMaxBytes of one run: its oldest events go, other runs keep theirs', async () => {
      const caps = { maxBytes: 1_000_000, runMaxBytes: 10_000 };
      const bus = await makeBus(10_000, caps);
      const loud: string[] = [];
      const quiet: string[] = [];
      for (let i = 0; i < 40; i += 1) {
        loud.push(await bus.publish(T, bigEvent('loud', i, 1_000)));
        if (i % 4 === 0) quiet.push(await bus.publish(T, event(i)));
      }
      const kept = await readAll(bus, T);
      const keptLoud = kept.filter((e) => e.event.run_id === 'loud');
      expect(sum(keptLoud)).toBeLessThanOrEqual(caps.runMaxBytes);
      expect(sum(keptLoud) + bytesOf(keptLoud[0]!)).toBeGreaterThan(caps.runMaxBytes);
      expect(keptLoud.map((e) => e.id)).toEqual(loud.slice(loud.length - keptLoud.length));
      // Every quiet event stays, though older than the loud run's dropped ones.
      expect(kept.filter((e) => e.event.run_id !== 'loud').map((e) => e.id)).toEqual(quiet);
      // A resume from a dropped event of the loud run skips what was dropped, nothing else.
      const resumed = await bus.readAfter(T, loud[0]!, 1_000);
      expect(resumed.map((e) => e.id)).toEqual(kept.filter((e) => compareEventIds(e.id, loud[0]!) > 0).map((e) => e.id));
      await bus.close();
    });

    it('delivers live events in publish order to every listener, and stops at unsubscribe', async () => {
      const bus = await makeBus(1000);
      const base = listenerCount(bus);
      const first: string[] = [];
      const second: string[] = [];
      const offFirst = bus.subscribe(T, (e) => first.push(e.id));
      const offSecond = bus.subscribe(T, (e) => second.push(e.id));
      expect(listenerCount(bus)).toBe(base + 2);
      await bus.ready(5_000);
      const ids = await Promise.all(Array.from({ length: 200 }, (_, i) => bus.publish(T, event(i))));
      const ordered = [...ids].sort(compareEventIds);
      await waitFor('200 live events', () => first.length === 200 && second.length === 200);
      expect(first).toEqual(ordered);
      expect(second).toEqual(ordered);
      offFirst();
      offFirst();
      expect(listenerCount(bus)).toBe(base + 1);
      const last = await bus.publish(T, event(999));
      await waitFor('the last event', () => second.at(-1) === last);
      expect(first).toHaveLength(200);
      offSecond();
      expect(listenerCount(bus)).toBe(base);
      await bus.close();
    });

    it('an EventSeam resumes after an id with no gap and no duplicate while events keep coming', async () => {
      const bus = await makeBus(10_000);
      const before = await publishMany(bus, T, 50);
      const got: string[] = [];
      const seam = new EventSeam((e) => got.push(e.id));
      seam.hold();
      const off = bus.subscribe(T, (e) => seam.push(e));
      await bus.ready(5_000);
      // Publishers race the replay: some of these land in the log read, some only live, some both.
      const racing = Promise.all(Array.from({ length: 100 }, (_, i) => bus.publish(T, event(1000 + i))));
      await seam.catchUp((after, count) => bus.readAfter(T, after, count), before[19]!, 7);
      const during = await racing;
      const after = await publishMany(bus, T, 20, 2000);
      const expected = [...before.slice(20), ...[...during].sort(compareEventIds), ...after];
      await waitFor('every event after the resume point', () => got.length >= expected.length);
      expect(got).toEqual(expected);
      off();
      await bus.close();
    });

    it('an EventSeam that holds more than it may re-reads the log instead', async () => {
      const bus = await makeBus(10_000);
      const start = await bus.publish(T, event(0));
      const got: string[] = [];
      const seam = new EventSeam((e) => got.push(e.id), 5);
      seam.hold();
      let pushed = 0;
      const off = bus.subscribe(T, (e) => {
        pushed += 1;
        seam.push(e);
      });
      await bus.ready(5_000);
      const ids = await publishMany(bus, T, 40, 1);
      await waitFor('40 live events pushed into the seam (more than it holds)', () => pushed === 40);
      await seam.catchUp((after, count) => bus.readAfter(T, after, count), start, 8);
      expect(got).toEqual(ids);
      expect(seam.holding).toBe(false);
      off();
      await bus.close();
    });

    it('ready resolves, and close drops every listener', async () => {
      const bus = await makeBus(10);
      bus.subscribe(randomUUID(), () => {});
      await expect(bus.ready(5_000)).resolves.toBeUndefined();
      await bus.close();
      await bus.close();
      expect(listenerCount(bus)).toBe(0);
    });
  });
}
