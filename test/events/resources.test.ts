import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { DEFAULT_TENANT, type RunEvent } from '../../src/domain/types.js';
import { listenerCount } from '../support/listeners.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { useRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { openRaw } from '../support/sse.js';

const redis = useRedis();

const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

async function gauge(app: TestApi): Promise<number> {
  const text = (await call(`${app.url}/metrics`)).body as string;
  return Number(/^agentplane_sse_connections (\d+)$/m.exec(text)?.[1]);
}

describe.each(['redis', 'memory'] as const)('1,000 connect/disconnect cycles on %s', (mode) => {
  let app: TestApi;

  beforeAll(async () => {
    app = await startTestApi({ ...(mode === 'redis' ? { redisUrl: redis.url } : {}), env: { SERVICE_SSE_HEARTBEAT_MS: '1000' } });
  });
  afterAll(async () => {
    await app.close();
  });

  it('leave no listeners, timers, streams, connections or extra subscriptions behind, and the gauge at 0', async () => {
    const { streams } = app.api.deps;
    const events = app.backend.events;
    const someId = await events.publish(DEFAULT_TENANT, { type: 'completed', session: 's', run_id: 'r', agent_id: 'echo', ts: new Date().toISOString() });
    const baseline = { listeners: listenerCount(events), timeouts: timeouts() };

    const queries = ['', '?session=s', `?last_event_id=${someId}`, '?session=t&last_event_id=0-0'];
    let opened = 0;
    let peakOpen = 0;
    for (let batch = 0; batch < 50; batch += 1) {
      await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const stream = await openRaw(`${app.url}/api/events/stream${queries[i % queries.length]}`);
          await stream.waitForFrames((f) => f.length >= 1, 'the retry line');
          opened += stream.status === 200 ? 1 : 0;
          peakOpen = Math.max(peakOpen, streams.size);
          stream.destroy();
        }),
      );
    }
    expect(opened).toBe(1000);
    expect(peakOpen).toBeGreaterThan(1);

    await waitFor('every stream to close', () => streams.size === 0);
    await waitFor('every connection to close', () =>
      new Promise<boolean>((resolve) => app.api.server.getConnections((_, count) => resolve(count === 0))),
    );
    expect(listenerCount(events)).toBe(baseline.listeners);
    expect(await gauge(app)).toBe(0);
    await waitFor('the timers to settle at the baseline', () => timeouts() <= baseline.timeouts);

    if (mode === 'redis') {
      const probe = new Redis(redis.url);
      onTestFinished(() => probe.disconnect());
      const channel = `${app.config.SERVICE_KEY_PREFIX}:events`;
      const [, subscribers] = (await probe.pubsub('NUMSUB', channel)) as [string, number];
      expect(subscribers).toBe(1);
      const clients = (await probe.client('LIST')) as string;
      expect(clients.split('\n').filter((line) => line.includes('name=agentplane:subscriber') && / sub=1 /.test(line))).toHaveLength(1);
    }
  });
});

describe('a client that never reads', () => {
  let app: TestApi;

  beforeAll(async () => {
    app = await startTestApi({ redisUrl: redis.url, env: { SERVICE_SSE_HEARTBEAT_MS: '60000' } });
  });
  afterAll(async () => {
    await app.close();
  });

  it('is disconnected once it holds too much, with the server buffer bounded, while a reading client gets all 50,000 events', async () => {
    const { streams } = app.api.deps;
    const slow = await openRaw(`${app.url}/api/events/stream`);
    await slow.waitForFrames((f) => f.length >= 1, 'the retry line');
    slow.pause();
    const slowStream = streams.streams()[0]!;
    const fast = await openRaw(`${app.url}/api/events/stream`);
    onTestFinished(() => {
      slow.destroy();
      fast.destroy();
    });
    const listeners = listenerCount(app.backend.events);

    const padding = 'x'.repeat(1000);
    const event = (i: number): RunEvent => ({ type: 'failed', session: `s${i % 7}`, run_id: `r${i}`, agent_id: 'echo', ts: new Date().toISOString(), error: padding });
    const total = 50_000;
    let last = '';
    for (let sent = 0; sent < total; sent += 500) {
      const ids = await Promise.all(Array.from({ length: 500 }, (_, i) => app.backend.events.publish(DEFAULT_TENANT, event(sent + i))));
      last = ids[ids.length - 1]!;
      // The reading client keeps up (so it is never the one dropped); the other one does not read at all.
      await fast.waitForFrames((f) => f.length - 1 >= sent + 500, `${sent + 500} events on the reading client`, 30_000);
    }

    expect(slowStream.isClosed).toBe(true);
    expect(slowStream.peakBufferedBytes).toBeGreaterThan(64 * 1024);
    expect(slowStream.peakBufferedBytes).toBeLessThanOrEqual(streams.maxBufferedBytes + 2 * 1024);
    expect(streams.size).toBe(1);
    expect(listenerCount(app.backend.events)).toBe(listeners - 1);
    expect(await gauge(app)).toBe(1);

    // What the kernel had buffered for it arrives, then the end of the connection the server closed.
    slow.resume();
    await slow.ended;
    expect(slow.frames.length - 1).toBeLessThan(total);
    expect(fast.frames.length - 1).toBe(total);
    expect(fast.frames[total]!.id).toBe(last);
  });
});
