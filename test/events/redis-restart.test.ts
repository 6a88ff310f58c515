import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisEventBus } from '../../src/adapters/redis/event-bus.js';
import { DEFAULT_TENANT, type RunEvent } from '../../src/domain/types.js';
import { startProcess, type AgentProcess } from '../support/processes.js';
import { startPrivateRedis, uniquePrefix, type PrivateRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { eventsOf, openRaw, watch, type RawStream, type Watcher } from '../support/sse.js';

const event = (session: string, node: string): RunEvent => ({
  type: 'node_start',
  session,
  run_id: 'run',
  agent_id: 'echo',
  ts: new Date().toISOString(),
  node,
});

describe('a Redis restart while clients are connected', () => {
  let redis: PrivateRedis;
  let api: AgentProcess;
  let prefix: string;
  const connections: Redis[] = [];
  let all: Watcher;
  let filtered: RawStream;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    prefix = uniquePrefix('restart');
    api = await startProcess({
      entry: 'src/main/api.ts',
      env: { REDIS_URL: redis.url, SERVICE_KEY_PREFIX: prefix, LOG_LEVEL: 'warn', SERVICE_SHUTDOWN_DELAY_MS: '0' },
    });
  });

  /** A bus on fresh connections (so it is connected while the API's are still backing off). */
  async function connectPublisher(): Promise<RedisEventBus> {
    const commands = new Redis(redis.url, { lazyConnect: true });
    const subscriber = new Redis(redis.url, { lazyConnect: true });
    connections.push(commands, subscriber);
    for (const c of [commands, subscriber]) c.on('error', () => {});
    await commands.connect();
    return new RedisEventBus({ redis: commands, subscriber, keyPrefix: prefix, retain: 10_000 });
  }
  afterAll(async () => {
    all?.close();
    filtered?.destroy();
    await api?.stop();
    for (const c of connections) c.disconnect();
    await redis?.stop();
  });

  it('keeps the process up, and after Redis is back delivers every event published since, in order', async () => {
    all = watch(`${api.url}/api/events/stream`);
    filtered = await openRaw(`${api.url}/api/events/stream?session=even`);
    await all.waitForOpen();
    let publisher = await connectPublisher();
    const before: string[] = [];
    for (let i = 0; i < 4; i += 1) before.push(await publisher.publish(DEFAULT_TENANT, event(i % 2 ? 'odd' : 'even', `before-${i}`)));
    await all.waitForCount(4);

    await redis.kill();
    await waitFor('readiness to report Redis down', async () => (await fetch(`${api.url}/health/ready`)).status === 503);
    // A stream opened while this replica has no subscription ends with just the retry line; the client comes back.
    const during = await openRaw(`${api.url}/api/events/stream`);
    await during.ended;
    expect(during.frames).toEqual([{ retry: 3000 }]);

    await redis.restart();
    // Published at once, while the API's subscriber is still backing off: pub/sub alone loses these.
    publisher = await connectPublisher();
    const after: string[] = [];
    for (let i = 0; i < 20; i += 1) after.push(await publisher.publish(DEFAULT_TENANT, event(i % 2 ? 'odd' : 'even', `after-${i}`)));

    await all.waitForCount(24, 30_000);
    expect(all.received.map((e) => e.id)).toEqual([...before, ...after]);
    const evens = [...before, ...after].filter((_, i) => i % 2 === 0);
    await filtered.waitForFrames((f) => eventsOf(f).length === evens.length, 'every even event on the raw stream', 30_000);
    expect(eventsOf(filtered.frames).map((e) => e.id)).toEqual(evens);

    // Neither client had to reconnect: the replica caught up from the Redis stream by itself.
    expect(all.requests).toHaveLength(1);
    expect((await fetch(`${api.url}/health/live`)).status).toBe(200);
    const next = await publisher.publish(DEFAULT_TENANT, event('even', 'live'));
    await filtered.waitForFrames((f) => eventsOf(f).some((e) => e.id === next), 'a live event after the catch-up');
    expect(api.lines.filter((l) => l.json?.level !== undefined && Number(l.json.level) >= 60)).toEqual([]);
  });
});
