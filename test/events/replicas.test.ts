import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { compareEventIds } from '../../src/domain/event-ids.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { startProcess, type AgentProcess } from '../support/processes.js';
import { uniquePrefix, useRedis } from '../support/redis.js';
import { openRaw, watch, type Received } from '../support/sse.js';

const redis = useRedis();

/** `type` plus `node` (or the approval answer) of each event: the shape of a run. */
const shape = (events: Received[]) =>
  events.map(({ event }) => [event.type, event.node ?? (event.approved === undefined ? '' : String(event.approved)), event.status ?? ''].join(' ').trim());

function expectRising(events: Received[]): void {
  for (let i = 1; i < events.length; i += 1) expect(compareEventIds(events[i]!.id, events[i - 1]!.id)).toBeGreaterThan(0);
}

describe('two API replicas and a worker process on one Redis', () => {
  let a: TestApi;
  let b: TestApi;
  let worker: AgentProcess;

  beforeAll(async () => {
    const env = { SERVICE_KEY_PREFIX: uniquePrefix('replicas'), SERVICE_REPLICA_ID: 'replica' };
    a = await startTestApi({ redisUrl: redis.url, env: { ...env, SERVICE_REPLICA_ID: 'replica-a' } });
    b = await startTestApi({ redisUrl: redis.url, env: { ...env, SERVICE_REPLICA_ID: 'replica-b' } });
    worker = await startProcess({
      entry: 'src/main/worker.ts',
      portVariable: 'WORKER_PORT',
      env: { REDIS_URL: redis.url, SERVICE_KEY_PREFIX: env.SERVICE_KEY_PREFIX, LOG_LEVEL: 'warn' },
    });
  });
  afterAll(async () => {
    await worker?.stop();
    await a?.close();
    await b?.close();
  });

  it('a client of replica A receives, in order, every event of a run started on B and executed by the worker', async () => {
    const onA = watch(`${a.url}/api/events/stream`);
    onTestFinished(() => onA.close());
    await onA.waitForOpen();
    const started = await call(`${b.url}/api/runs`, { method: 'POST', json: { agent_id: 'echo', input: { text: 'hi' } } });
    expect(started.status).toBe(202);
    expect(started.headers.get('x-served-by')).toBe('replica-b');
    const { run_id, session_id } = started.body as { run_id: string; session_id: string };

    await onA.waitForCount(5);
    const events = onA.received.filter((e) => e.event.run_id === run_id);
    expect(shape(events)).toEqual(['node_start receive', 'node_end receive ok', 'node_start respond', 'node_end respond ok', 'completed']);
    expectRising(events);
    for (const { event } of events) {
      expect(event).toMatchObject({ session: session_id, run_id, agent_id: 'echo', ts: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
    }
  });

  it('an approval answered on B resumes the run on the worker; a session-filtered client of A sees the whole story', async () => {
    const started = await call(`${b.url}/api/runs`, { method: 'POST', json: { agent_id: 'human-review', input: { topic: 'replicas' } } });
    const { run_id, session_id } = started.body as { run_id: string; session_id: string };
    // Subscribed after the run started: the stream resumes from the beginning of the retained log.
    const onA = watch(`${a.url}/api/events/stream?session=${session_id}`, { lastEventId: '0-0' });
    const other = await openRaw(`${a.url}/api/events/stream?session=someone-else`);
    onTestFinished(() => {
      onA.close();
      other.destroy();
    });
    await onA.waitForCount(4);
    const interrupted = onA.received.find((e) => e.event.type === 'interrupted')!;
    expect(interrupted.event.approval_id).toEqual(expect.any(String));
    const answer = await call(`${b.url}/api/approval/respond`, {
      method: 'POST',
      json: { id: interrupted.event.approval_id, approved: true, comment: 'ship it' },
    });
    expect(answer.status).toBe(200);

    await onA.waitForCount(10);
    expect(shape(onA.received)).toEqual([
      'node_start draft',
      'node_end draft ok',
      'node_start review',
      'interrupted review',
      'approval_decided true',
      'node_start review',
      'node_end review ok',
      'node_start publish',
      'node_end publish ok',
      'completed',
    ]);
    expect(onA.received.every((e) => e.event.session === session_id && e.event.run_id === run_id)).toBe(true);
    expect(onA.received[4]!.event.approval_id).toBe(interrupted.event.approval_id);
    expectRising(onA.received);
    expect(other.frames.filter((f) => f.data !== undefined)).toEqual([]);
  });
});

describe('graceful shutdown of an API process', () => {
  it('ends open streams at SIGTERM and exits 0 without waiting for the force-exit timer', async () => {
    const api = await startProcess({
      entry: 'src/main/api.ts',
      env: {
        REDIS_URL: redis.url,
        SERVICE_KEY_PREFIX: uniquePrefix('shutdown'),
        SERVICE_SHUTDOWN_DELAY_MS: '0',
        SERVICE_SHUTDOWN_TIMEOUT_MS: '30000',
        LOG_LEVEL: 'warn',
      },
    });
    onTestFinished(() => void api.stop());
    const streams = await Promise.all([openRaw(`${api.url}/api/events/stream`), openRaw(`${api.url}/api/events/stream?session=x`)]);
    await Promise.all(streams.map((s) => s.waitForFrames((f) => f.length >= 1, 'the retry line')));
    api.signal('SIGTERM');
    await Promise.all(streams.map((s) => s.ended));
    expect(await api.exited).toBe(0);
  });
});
