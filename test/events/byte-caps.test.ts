import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { DEFAULT_TENANT, type RunEvent } from '../../src/domain/types.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { eventsOf, openRaw, type RawStream } from '../support/sse.js';

/**
 * Resuming a stream (Last-Event-ID) from an event the byte caps dropped replays what is
 * retained after it, as from an event the count cap dropped: here a run past
 * SERVICE_EVENTS_RUN_MAX_BYTES lost its oldest events while a quiet run of the same tenant,
 * published in between, kept all of its own.
 */
const RUN_MAX_BYTES = 1024 * 1024;
/** ~100 KB of UTF-8 per loud event (50,000 two-byte characters): 14 of them pass the run's cap. */
const LOUD = 'é'.repeat(50_000);

describe.each(['memory', 'redis'] as const)('resuming past the event byte caps on %s', (mode) => {
  let redis: TestRedis | undefined;
  let app: TestApi;

  beforeAll(async () => {
    if (mode === 'redis') redis = await startRedis();
    app = await startTestApi({
      ...(redis ? { redisUrl: redis.url } : {}),
      env: { SERVICE_SSE_HEARTBEAT_MS: '60000', SERVICE_EVENTS_RUN_MAX_BYTES: String(RUN_MAX_BYTES), SERVICE_EVENTS_MAX_BYTES: String(4 * RUN_MAX_BYTES) },
    });
  });
  afterAll(async () => {
    await app?.close();
    await redis?.stop();
  });

  async function open(query: string, lastEventId: string): Promise<RawStream> {
    const stream = await openRaw(`${app.url}/api/events/stream${query}`, { 'Last-Event-ID': lastEventId });
    onTestFinished(() => stream.destroy());
    return stream;
  }

  it('replays the retained events after a dropped id, of the loud run and of the quiet one', async () => {
    const event = (session: string, run: string, i: number, data: unknown): RunEvent => ({
      type: 'custom', session, run_id: run, agent_id: 'echo', ts: new Date().toISOString(), name: `e${i}`, data,
    });
    const loud: string[] = [];
    const quiet: string[] = [];
    for (let i = 0; i < 14; i += 1) {
      loud.push(await app.backend.events.publish(DEFAULT_TENANT, event('loud', 'run-loud', i, LOUD)));
      quiet.push(await app.backend.events.publish(DEFAULT_TENANT, event('quiet', 'run-quiet', i, i)));
    }
    const retained = (await app.backend.events.readAfter(DEFAULT_TENANT, '0-0', 1_000)).map((e) => e.id);
    const loudKept = loud.filter((id) => retained.includes(id));
    expect(loudKept.length).toBeGreaterThan(0);
    expect(loudKept.length).toBeLessThan(loud.length);
    expect(loudKept).toEqual(loud.slice(loud.length - loudKept.length));
    expect(quiet.every((id) => retained.includes(id))).toBe(true);

    // From the loud run's first, dropped, event: every quiet event after it, none missing.
    const quietStream = await open('?session=quiet', loud[0]!);
    await quietStream.waitForFrames((f) => eventsOf(f).length === quiet.length, 'the quiet events after the dropped one');
    expect(eventsOf(quietStream.frames).map((e) => e.id)).toEqual(quiet);
    // The loud run's own: those retained, oldest first.
    const loudStream = await open('?session=loud', loud[0]!);
    await loudStream.waitForFrames((f) => eventsOf(f).length === loudKept.length, 'the loud events retained');
    expect(eventsOf(loudStream.frames).map((e) => e.id)).toEqual(loudKept);
  });
});
