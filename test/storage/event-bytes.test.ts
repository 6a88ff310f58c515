import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryBackend } from '../../src/adapters/memory/backend.js';
import { createRedisBackend } from '../../src/adapters/redis/backend.js';
import { loadConfig } from '../../src/config.js';
import { DEFAULT_EVENT_RETENTION, DEFAULT_STORAGE_LIMITS, type RunEvent, type Span, type StoredEvent } from '../../src/domain/types.js';
import type { Backend } from '../../src/ports/backend.js';
import { Redis } from 'ioredis';
import { RedisEventBus } from '../../src/adapters/redis/event-bus.js';
import { RedisKeys } from '../../src/adapters/redis/keys.js';
import { compareEventIds } from '../../src/domain/event-ids.js';
import { runEvent } from '../../src/domain/run-events.js';
import { startPrivateRedis, startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';
import { monitorRedis } from '../support/redis-monitor.js';
import { waitFor } from '../support/wait.js';

/**
 * The byte caps of the event log on the run path too: events a worker's journal publishes
 * (on Redis inside beginRun and stepRun, not the publish script) are counted and dropped as
 * the event bus's own, on both backends.
 */
const CAPS = { eventsMaxBytes: 9_000, eventsRunMaxBytes: 7_000 };
const common = { limits: DEFAULT_STORAGE_LIMITS, eventsRetain: 10_000, concurrency: 1, shutdownTimeoutMs: 1_000, ...CAPS };

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const bytesOf = (e: StoredEvent) => Buffer.byteLength(JSON.stringify(e.event));
const sum = (events: StoredEvent[]) => events.reduce((total, e) => total + bytesOf(e), 0);

async function readAll(backend: Backend, tenant: string): Promise<StoredEvent[]> {
  return backend.events.readAfter(tenant, '0-0', 100_000);
}

function span(node: string): Span {
  const now = new Date().toISOString();
  return { span_id: randomUUID(), parent_id: 'root', name: node, start: now, end: now, attributes: {} };
}

/** A run taken by the journal, with a checkpoint at node `a`. */
async function runningRun(backend: Backend, tenant: string) {
  const ref = { run_id: randomUUID(), session_id: randomUUID(), agent_id: 'echo' };
  await backend.store.runs.createRun(tenant, { ...ref, start: { node_id: 'a', input: {} } });
  const { run } = await backend.journal.begin(tenant, { id: ref.run_id, session_id: ref.session_id, agent_id: ref.agent_id });
  return run;
}

function journalBytes(name: string, build: () => Backend): void {
  describe(`event bytes on the run path: ${name}`, () => {
    it('counts what begin and step publish: a run past its cap loses its oldest, the tenant past its cap its oldest', async () => {
      const backend = build();
      try {
        const tenant = `t-${randomUUID()}`;
        const loud = await runningRun(backend, tenant);
        const big: RunEvent = { type: 'custom', session: loud.session_id, run_id: loud.id, agent_id: 'echo', ts: new Date().toISOString(), name: 'big', data: 'é'.repeat(2_900) };
        const bigId = await backend.events.publish(tenant, big);
        // The loud run's node events take it past its own cap: its oldest (the node_start of begin, then the big one) go.
        for (let i = 0; i < 6; i += 1) await backend.journal.step(tenant, loud, { ended: [{ node: 'a', span: span('a') }], patch: { [`k${i}`]: i }, next: 'a' });
        let kept = await readAll(backend, tenant);
        expect(sum(kept.filter((e) => e.event.run_id === loud.id))).toBeLessThanOrEqual(CAPS.eventsRunMaxBytes);
        expect(kept.map((e) => e.id)).not.toContain(bigId);
        expect(kept.at(-1)!.event).toMatchObject({ type: 'node_start', run_id: loud.id });

        // Another big event, then a quiet run's steps past the tenant's cap: the oldest of the tenant go, whoever's they are.
        const bigAgain = await backend.events.publish(tenant, { ...big, name: 'again' });
        const quiet = await runningRun(backend, tenant);
        for (let i = 0; i < 20; i += 1) await backend.journal.step(tenant, quiet, { ended: [{ node: 'a', span: span('a') }], patch: {}, next: i === 19 ? '__end__' : 'a' });
        kept = await readAll(backend, tenant);
        expect(sum(kept)).toBeLessThanOrEqual(CAPS.eventsMaxBytes);
        expect(kept.map((e) => e.id)).not.toContain(bigAgain);
        expect(kept.at(-1)!.event).toMatchObject({ type: 'completed', run_id: quiet.id });
        // The newest events, with no gap among the quiet run's (none of its events passed its cap).
        const quietKept = kept.filter((e) => e.event.run_id === quiet.id);
        expect(quietKept.length).toBeGreaterThan(10);
        expect(kept.slice(kept.length - quietKept.length)).toEqual(quietKept);
      } finally {
        await backend.close();
      }
    });
  });
}

journalBytes('memory', () => createMemoryBackend(common));
journalBytes('redis', () => createRedisBackend({ ...common, connection: { mode: 'single', url: redis.url }, keyPrefix: uniquePrefix('event-bytes'), lockDurationMs: 30_000 }));

/**
 * Steps that publish several events at once, past the count cap, a run's byte cap and the
 * tenant's: the Redis scripts must keep what the memory backend keeps and leave the accounting
 * beside the stream (the bytes hash) equal to what the stream holds.
 */
describe('event accounting of steps with several events', () => {
  const caps = { eventsRetain: 12, eventsMaxBytes: 2_000, eventsRunMaxBytes: 1_200 };
  const options = { ...common, ...caps };

  /** The same runs and steps on a backend: three runs interleaved, supersteps of 1–3 nodes, two large events. */
  async function drive(backend: Backend, tenant: string, steps = 24): Promise<string[]> {
    const runs = [await runningRun(backend, tenant), await runningRun(backend, tenant), await runningRun(backend, tenant)];
    const label = new Map(runs.map((run, i) => [run.id, `run${i}`]));
    for (let i = 0; i < steps; i += 1) {
      const run = runs[i % 3]!;
      const width = 1 + (i % 3);
      const nodes = Array.from({ length: width }, (_, n) => `${'n'.repeat(1 + ((i * 7 + n) % 40))}${n}`);
      const last = i >= steps - 3;
      await backend.journal.step(tenant, run, { ended: nodes.map((node) => ({ node, span: span(node) })), patch: { [`k${i}`]: i }, next: last ? '__end__' : nodes[0]!, starts: last ? undefined : nodes });
      if (i === 8 || i === 17) {
        await backend.events.publish(tenant, { type: 'custom', session: run.session_id, run_id: run.id, agent_id: 'echo', ts: new Date().toISOString(), name: 'large', data: 'é'.repeat(400 + i) });
      }
    }
    const kept = await readAll(backend, tenant);
    return kept.map(({ event: e }) => `${label.get(e.run_id)} ${e.type} ${'node' in e ? e.node : 'name' in e ? e.name : ''}`);
  }

  it('keeps on Redis the events the memory backend keeps, with the bytes hash equal to the stream', async () => {
    await onBoth(options, 'event-steps', async ({ memory, onRedis, admin, keys }) => {
      const tenant = `t-${randomUUID()}`;
      const expected = await drive(memory, tenant);
      expect(await drive(onRedis, tenant)).toEqual(expected);
      expect(expected.length).toBeLessThanOrEqual(caps.eventsRetain);
      // The accounting beside the stream: what each run and the tenant retain, one member per event.
      const state = await accountingOf(admin, keys, tenant);
      expect(state).toEqual(accountingFor(state.entries));
    });
  });

  it('past the count cap drops its batches the same on both, the accounting equal to the stream', async () => {
    // 200 events and a slack of 2 (eventCountSlack): ~1,000 events published, trimmed in batches.
    const batched = { ...common, eventsRetain: 200, eventsMaxBytes: 1_048_576, eventsRunMaxBytes: 1_048_576 };
    await onBoth(batched, 'event-batches', async ({ memory, onRedis, admin, keys }) => {
      const tenant = `t-${randomUUID()}`;
      const expected = await drive(memory, tenant, 240);
      expect(await drive(onRedis, tenant, 240)).toEqual(expected);
      expect(expected.length).toBeGreaterThanOrEqual(200);
      expect(expected.length).toBeLessThanOrEqual(202);
      const state = await accountingOf(admin, keys, tenant);
      expect(state.entries).toHaveLength(expected.length);
      expect(state).toEqual(accountingFor(state.entries));
    });
  });
});

/** Runs `check` with a memory backend and a Redis one (its own key prefix) of the same options, then closes them. */
async function onBoth(
  options: typeof common,
  label: string,
  check: (both: { memory: Backend; onRedis: Backend; admin: Redis; keys: RedisKeys }) => Promise<void>,
): Promise<void> {
  const prefix = uniquePrefix(label);
  const memory = createMemoryBackend(options);
  const onRedis = createRedisBackend({ ...options, connection: { mode: 'single', url: redis.url }, keyPrefix: prefix, lockDurationMs: 30_000 });
  const admin = new Redis(redis.url);
  try {
    await check({ memory, onRedis, admin, keys: new RedisKeys(prefix) });
  } finally {
    admin.disconnect();
    await Promise.all([memory.close(), onRedis.close()]);
  }
}

/**
 * The accounting beside a tenant's stream on Redis: its entries, the bytes hash's counters, the
 * runs whose `first:` field is where their oldest entry is looked for (at or before it: "(" and
 * an id, strictly before), how many `first:` fields there are, and whether the by-run index of
 * earlier versions exists.
 */
async function accountingOf(admin: Redis, keys: RedisKeys, tenant: string) {
  const entries = (await admin.xrange(keys.events(tenant), '-', '+')).map(([id, fields]) => {
    const field = (name: string) => fields[fields.indexOf(name) + 1]!;
    return { id, run: field('r'), bytes: Buffer.byteLength(field('e')) };
  });
  const hash = await admin.hgetall(keys.eventBytes(tenant));
  const bytes = Object.fromEntries(Object.entries(hash).filter(([field]) => !field.startsWith('first:')));
  const firstFields = Object.keys(hash).filter((field) => field.startsWith('first:'));
  const firsts = firstFields
    .map((field) => field.slice('first:'.length))
    .filter((run) => {
      const oldest = entries.find((e) => e.run === run);
      const from = hash[`first:${run}`]!;
      if (!oldest) return false;
      const order = compareEventIds(from.replace(/^\(/, ''), oldest.id);
      return from.startsWith('(') ? order < 0 : order <= 0;
    })
    .sort();
  return { entries, bytes, firsts, firstFields: firstFields.length, byRunIndex: (await admin.exists(keys.eventsByRun(tenant))) === 1 };
}

/** What publishing the stream's entries one by one leaves beside it: each run's bytes and the tenant's, each run's oldest findable. */
function accountingFor(entries: { id: string; run: string; bytes: number }[]) {
  const byRun = new Map<string, number>();
  for (const e of entries) byRun.set(e.run, (byRun.get(e.run) ?? 0) + e.bytes);
  const total = entries.reduce((n, e) => n + e.bytes, 0);
  return {
    entries,
    bytes: { tenant: String(total), ...Object.fromEntries([...byRun].map(([run, n]) => [`run:${run}`, String(n)])) },
    firsts: [...byRun.keys()].sort(),
    firstFields: byRun.size,
    byRunIndex: false,
  };
}

/**
 * A step's events are of one run: stepRun counts them together, reading the counters once and
 * writing them back once, not four commands per event. What it keeps and what the accounting
 * holds after stay those of publishing the events one by one, also when the step's second event
 * takes the run and the tenant past their caps.
 */
describe('the events of one step on Redis, accounted together', () => {
  const bytesOfEvent = (event: RunEvent) => Buffer.byteLength(JSON.stringify(event));
  /** The node after the step's: its node_start is the largest event. */
  const NEXT = 'b'.repeat(600);

  it('counts two events of a step in 3 commands beside their XADDs (read the counters, the length; one HSET)', async () => {
    const prefix = uniquePrefix('event-count');
    const backend = createRedisBackend({ ...common, eventsMaxBytes: DEFAULT_EVENT_RETENTION.bytes, eventsRunMaxBytes: DEFAULT_EVENT_RETENTION.runBytes, connection: { mode: 'single', url: redis.url }, keyPrefix: prefix, lockDurationMs: 30_000 });
    const admin = new Redis(redis.url);
    const monitor = await monitorRedis(redis.url);
    try {
      const tenant = `t-${randomUUID()}`;
      const keys = new RedisKeys(prefix);
      const accounting = new Set([keys.eventBytes(tenant), keys.eventsByRun(tenant)]);
      const inside: string[] = [];
      const markers = new Set<string>();
      // The commands of scripts on this tenant's event keys, but the XADDs and announcements:
      // what the retention accounting costs.
      monitor.on('monitor', (_time: string, args: string[], source: string) => {
        const [command, key] = [String(args[0]).toLowerCase(), String(args[1])];
        if (source !== 'lua') {
          if (command === 'set') markers.add(key);
        } else if (accounting.has(key) || (key === keys.events(tenant) && command !== 'xadd')) inside.push(command);
      });
      /** The accounting commands run inside Redis for `work`: MONITOR reports in order, so those before a SET are seen once it is. */
      const seen = async () => {
        const marker = `${prefix}:marker-${markers.size}`;
        await admin.set(marker, '1');
        await waitFor('the marker seen', () => markers.has(marker));
      };
      const counted = async (work: () => Promise<unknown>): Promise<string[]> => {
        await seen();
        inside.length = 0;
        await work();
        await seen();
        return [...inside];
      };
      let run = await runningRun(backend, tenant);
      // Two events (node_end, node_start); then the run's last step: node_end and completed.
      const step = await counted(() => backend.journal.step(tenant, run, { ended: [{ node: 'a', span: span('a') }], patch: {}, next: 'b' }));
      const last = await counted(() => backend.journal.step(tenant, run, { ended: [{ node: 'b', span: span('b') }], patch: {}, next: '__end__' }));
      // One event a script: the same 3.
      run = await runningRun(backend, tenant);
      const begin = await counted(() => backend.journal.begin(tenant, { id: run.id, session_id: run.session_id, agent_id: run.agent_id }));
      const publish = await counted(() => backend.events.publish(tenant, { type: 'custom', session: run.session_id, run_id: run.id, agent_id: 'echo', ts: new Date().toISOString(), name: 'one', data: 1 }));
      expect({ step, last, begin, publish }).toEqual({
        step: ['hmget', 'xlen', 'hset'],
        last: ['hmget', 'xlen', 'hset'],
        begin: ['hmget', 'xlen', 'hset'],
        publish: ['hmget', 'xlen', 'hset'],
      });
      const state = await accountingOf(admin, keys, tenant);
      expect(state.entries).toHaveLength(8);
      expect(state).toEqual(accountingFor(state.entries));
    } finally {
      monitor.disconnect();
      admin.disconnect();
      await backend.close();
    }
  });

  /**
   * Another run's event, then run R: its node_start (begin), a custom event, and a step of
   * node_end `a` and node_start of a longer node. With the sizes of these events the caps are set
   * so that the step's second event takes R past its cap (R's oldest goes) and the tenant past
   * its own (the other run's goes), or past smaller caps: more of both, the step's own events too.
   */
  async function drive(backend: Backend, tenant: string): Promise<string[]> {
    const other = { id: `other-${tenant}`, session_id: `s-${tenant}`, agent_id: 'echo' };
    await backend.events.publish(tenant, runEvent(other, { type: 'custom', name: 'other', data: 'x'.repeat(10) }));
    const run = await runningRun(backend, tenant);
    await backend.events.publish(tenant, runEvent(run, { type: 'custom', name: 'own', data: 'y'.repeat(100) }));
    await backend.journal.step(tenant, run, { ended: [{ node: 'a', span: span('a') }], patch: {}, next: NEXT });
    const kept = await readAll(backend, tenant);
    return kept.map(({ event: e }) => `${e.run_id === run.id ? 'run' : 'other'} ${e.type} ${'node' in e ? e.node : 'name' in e ? e.name : ''}`);
  }

  /** Sizes of the events `drive` publishes (UUIDs and timestamps are of fixed length). */
  const sizes = () => {
    const run = { id: randomUUID(), session_id: randomUUID(), agent_id: 'echo' };
    const tenant = `t-${randomUUID()}`;
    return {
      other: bytesOfEvent(runEvent({ id: `other-${tenant}`, session_id: `s-${tenant}`, agent_id: 'echo' }, { type: 'custom', name: 'other', data: 'x'.repeat(10) })),
      start: bytesOfEvent(runEvent(run, { type: 'node_start', node: 'a' })),
      own: bytesOfEvent(runEvent(run, { type: 'custom', name: 'own', data: 'y'.repeat(100) })),
      end: bytesOfEvent(runEvent(run, { type: 'node_end', node: 'a', status: 'ok' })),
      next: bytesOfEvent(runEvent(run, { type: 'node_start', node: NEXT })),
    };
  };

  const { other, start, own, end, next } = sizes();
  // Past the run's cap by one byte with the step's second event: its oldest (begin's node_start) goes, and that is enough.
  const runCap = start + own + end + next - 1;
  // Then past the tenant's by one byte: the other run's event goes, and that is enough.
  const tenantCap = other + runCap - start;
  it.each([
    { name: 'past both caps by the second event', retain: 100, runCap, tenantCap, kept: ['run custom own', 'run node_end a', `run node_start ${NEXT}`] },
    { name: 'a tenant cap that takes an older event of the run', retain: 100, runCap, tenantCap: own + end + next - 1, kept: ['run node_end a', `run node_start ${NEXT}`] },
    { name: 'a run cap that takes its older events, then the step\'s first', retain: 100, runCap: end + next - 1, tenantCap, kept: ['other custom other', `run node_start ${NEXT}`] },
    { name: 'a tenant cap below the second event: both of the step go', retain: 100, runCap, tenantCap: next - 1, kept: [] },
    { name: 'a run cap below the second event: all of the run go', retain: 100, runCap: next - 1, tenantCap, kept: ['other custom other'] },
    { name: 'a run cap below each event of the step: each goes as it comes', retain: 100, runCap: end - 1, tenantCap, kept: [] },
    { name: 'a count cap of one event', retain: 1, runCap, tenantCap, kept: [`run node_start ${NEXT}`] },
  ])('keeps what publishing one by one keeps, with its accounting: $name', async ({ retain, runCap, tenantCap, kept }) => {
    const options = { ...common, eventsRetain: retain, eventsMaxBytes: tenantCap, eventsRunMaxBytes: runCap };
    await onBoth(options, 'event-step', async ({ memory, onRedis, admin, keys }) => {
      const tenant = `t-${randomUUID()}`;
      const expected = await drive(memory, tenant);
      expect(expected).toEqual(kept);
      expect(await drive(onRedis, tenant)).toEqual(expected);
      const state = await accountingOf(admin, keys, tenant);
      expect(state).toEqual(accountingFor(state.entries));
    });
  });
});

describe('event accounting left by an earlier version', () => {
  it('finds a run\'s oldest without its `first:` field and deletes the by-run index at the next trim', async () => {
    // Count cap 100 with its slack of 1; the run's cap is passed by its 5th ~2 KB event.
    const options = { ...common, eventsRetain: 100, eventsMaxBytes: 1_048_576, eventsRunMaxBytes: 7_000 };
    await onBoth(options, 'event-legacy', async ({ memory, onRedis, admin, keys }) => {
      const tenant = `t-${randomUUID()}`;
      const publish = async (backend: Backend, run: string, i: number) =>
        backend.events.publish(tenant, { type: 'custom', session: 's', run_id: run, agent_id: 'echo', ts: new Date().toISOString(), name: `e${i}`, data: 'x'.repeat(1_900) });
      const names = async (backend: Backend) => (await readAll(backend, tenant)).map(({ event: e }) => `${e.run_id} ${'name' in e ? e.name : ''}`);
      for (const backend of [memory, onRedis]) for (let i = 0; i < 3; i += 1) await publish(backend, 'loud', i);
      // As an earlier version left them: no `first:` field, an index of events by run.
      await admin.hdel(keys.eventBytes(tenant), 'first:loud');
      await admin.zadd(keys.eventsByRun(tenant), 0, 'loud\0earlier');
      for (const backend of [memory, onRedis]) for (let i = 3; i < 6; i += 1) await publish(backend, 'loud', i);
      expect(await names(onRedis)).toEqual(await names(memory));
      expect((await names(memory))[0]).toBe('loud e3');
      // Past the count cap: the trim deletes the index; the accounting is the stream's.
      for (const backend of [memory, onRedis]) for (let i = 0; i < 110; i += 1) await backend.events.publish(tenant, { type: 'custom', session: 's', run_id: `quiet-${i % 7}`, agent_id: 'echo', ts: new Date().toISOString(), name: `q${i}`, data: i });
      expect(await names(onRedis)).toEqual(await names(memory));
      const state = await accountingOf(admin, keys, tenant);
      expect(state).toEqual(accountingFor(state.entries));
    });
  });
});

describe('Redis memory under a run streaming large chunks', () => {
  it('grows by about the per-run cap (16 MiB by default), not by what the run published (40 MiB)', async () => {
    const own = await startPrivateRedis();
    const admin = new Redis(own.url);
    const [commands, subscriber] = [new Redis(own.url), new Redis(own.url)];
    const bus = new RedisEventBus({ redis: commands, subscriber, keyPrefix: uniquePrefix('event-memory'), retain: DEFAULT_EVENT_RETENTION.count });
    try {
      const used = async () => Number(/used_memory:(\d+)/.exec(await admin.info('memory'))![1]);
      const before = await used();
      const chunk = 'x'.repeat(250 * 1024);
      for (let i = 0; i < 160; i += 1) {
        await bus.publish('t', { type: 'stream', session: 's', run_id: 'loud', agent_id: 'g', ts: new Date().toISOString(), name: 'custom', data: `${i}${chunk}` });
      }
      const grown = (await used()) - before;
      const retained = await bus.readAfter('t', '0-0', 1_000);
      expect(sum(retained)).toBeLessThanOrEqual(DEFAULT_EVENT_RETENTION.runBytes);
      expect(retained.length).toBeGreaterThan(50);
      // The stream's entries, its accounting and allocator slack: well under what was sent.
      expect(grown).toBeLessThan(DEFAULT_EVENT_RETENTION.runBytes * 1.25);
    } finally {
      await bus.close();
      for (const client of [admin, commands, subscriber]) client.disconnect();
      await own.kill();
    }
  });
});

describe('SERVICE_EVENTS_MAX_BYTES and SERVICE_EVENTS_RUN_MAX_BYTES', () => {
  it('default to 64 MiB per tenant and 16 MiB per run, take byte counts, and refuse less than 1 MiB', () => {
    const config = loadConfig({});
    expect(config.SERVICE_EVENTS_MAX_BYTES).toBe(64 * 1024 * 1024);
    expect(config.SERVICE_EVENTS_RUN_MAX_BYTES).toBe(16 * 1024 * 1024);
    expect(DEFAULT_EVENT_RETENTION).toEqual({ count: 10_000, bytes: 64 * 1024 * 1024, runBytes: 16 * 1024 * 1024 });
    expect(loadConfig({ SERVICE_EVENTS_MAX_BYTES: '2097152', SERVICE_EVENTS_RUN_MAX_BYTES: '1048576' })).toMatchObject({
      SERVICE_EVENTS_MAX_BYTES: 2_097_152,
      SERVICE_EVENTS_RUN_MAX_BYTES: 1_048_576,
    });
    for (const name of ['SERVICE_EVENTS_MAX_BYTES', 'SERVICE_EVENTS_RUN_MAX_BYTES']) {
      for (const bad of ['0', '1048575', '1.5', 'lots']) expect(() => loadConfig({ [name]: bad })).toThrow(new RegExp(name));
    }
  });
});
