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
import { startPrivateRedis, startRedis, uniquePrefix, type TestRedis } from '../support/redis.js';

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
 * beside the stream (bytes hash, by-run set) equal to what the stream holds.
 */
describe('event accounting of steps with several events', () => {
  const caps = { eventsRetain: 12, eventsMaxBytes: 2_000, eventsRunMaxBytes: 1_200 };
  const options = { ...common, ...caps };

  /** The same runs and steps on a backend: three runs interleaved, supersteps of 1–3 nodes, two large events. */
  async function drive(backend: Backend, tenant: string): Promise<string[]> {
    const runs = [await runningRun(backend, tenant), await runningRun(backend, tenant), await runningRun(backend, tenant)];
    const label = new Map(runs.map((run, i) => [run.id, `run${i}`]));
    for (let i = 0; i < 24; i += 1) {
      const run = runs[i % 3]!;
      const width = 1 + (i % 3);
      const nodes = Array.from({ length: width }, (_, n) => `${'n'.repeat(1 + ((i * 7 + n) % 40))}${n}`);
      const last = i >= 21;
      await backend.journal.step(tenant, run, { ended: nodes.map((node) => ({ node, span: span(node) })), patch: { [`k${i}`]: i }, next: last ? '__end__' : nodes[0]!, starts: last ? undefined : nodes });
      if (i === 8 || i === 17) {
        await backend.events.publish(tenant, { type: 'custom', session: run.session_id, run_id: run.id, agent_id: 'echo', ts: new Date().toISOString(), name: 'large', data: 'é'.repeat(400 + i) });
      }
    }
    const kept = await readAll(backend, tenant);
    return kept.map(({ event: e }) => `${label.get(e.run_id)} ${e.type} ${'node' in e ? e.node : 'name' in e ? e.name : ''}`);
  }

  it('keeps on Redis the events the memory backend keeps, with the bytes hash and the by-run set equal to the stream', async () => {
    const prefix = uniquePrefix('event-steps');
    const memory = createMemoryBackend(options);
    const onRedis = createRedisBackend({ ...options, connection: { mode: 'single', url: redis.url }, keyPrefix: prefix, lockDurationMs: 30_000 });
    const admin = new Redis(redis.url);
    try {
      const tenant = `t-${randomUUID()}`;
      const expected = await drive(memory, tenant);
      expect(await drive(onRedis, tenant)).toEqual(expected);
      expect(expected.length).toBeLessThanOrEqual(caps.eventsRetain);

      // The accounting beside the stream: what each run and the tenant retain, one member per event.
      const keys = new RedisKeys(prefix);
      const entries = (await admin.xrange(keys.events(tenant), '-', '+')).map(([id, fields]) => {
        const field = (name: string) => fields[fields.indexOf(name) + 1]!;
        return { id, run: field('r'), bytes: Buffer.byteLength(field('e')) };
      });
      const byRun = new Map<string, number>();
      for (const e of entries) byRun.set(`run:${e.run}`, (byRun.get(`run:${e.run}`) ?? 0) + e.bytes);
      const total = entries.reduce((n, e) => n + e.bytes, 0);
      expect(await admin.hgetall(keys.eventBytes(tenant))).toEqual({ tenant: String(total), ...Object.fromEntries([...byRun].map(([f, n]) => [f, String(n)])) });
      const member = (e: (typeof entries)[number]) => {
        const [ms, seq] = e.id.split('-') as [string, string];
        return `${e.run}\0${ms.padStart(15, '0')}-${seq.padStart(10, '0')}\0${e.id}\0${e.bytes}`;
      };
      expect((await admin.zrange(keys.eventsByRun(tenant), '0', '-1')).sort()).toEqual(entries.map(member).sort());
    } finally {
      admin.disconnect();
      await Promise.all([memory.close(), onRedis.close()]);
    }
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
