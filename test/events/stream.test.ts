import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { DEFAULT_TENANT, RUN_EVENT_TYPES, type RunEvent } from '../../src/domain/types.js';
import { startSecuredApi, type SecuredApi } from '../auth/secured-api.js';
import { listenerCount } from '../support/listeners.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { useRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { eventsOf, openRaw, watch, type RawStream } from '../support/sse.js';

const redis = useRedis();

let n = 0;
function runEvent(session = 's1', extra: Partial<RunEvent> = {}): RunEvent {
  n += 1;
  return { type: 'node_start', session, run_id: 'r1', agent_id: 'echo', ts: new Date().toISOString(), node: `n${n}`, ...extra };
}

describe.each(['redis', 'memory'] as const)('GET /api/events/stream on %s', (mode) => {
  let app: TestApi;
  const streamUrl = () => `${app.url}/api/events/stream`;
  const publish = (event: RunEvent, tenant = DEFAULT_TENANT) => app.backend.events.publish(tenant, event);
  async function open(query = '', headers: Record<string, string> = {}): Promise<RawStream> {
    const stream = await openRaw(`${streamUrl()}${query}`, headers);
    onTestFinished(() => stream.destroy());
    return stream;
  }

  beforeAll(async () => {
    app = await startTestApi({ ...(mode === 'redis' ? { redisUrl: redis.url } : {}), env: { SERVICE_SSE_HEARTBEAT_MS: '60000' } });
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers 200 with the SSE headers, a retry line first, then one id/data frame per event', async () => {
    const stream = await open();
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toBe('text/event-stream');
    expect(stream.headers['cache-control']).toBe('no-cache');
    expect(stream.headers['x-accel-buffering']).toBe('no');
    expect(stream.headers['content-encoding']).toBeUndefined();
    await stream.waitForFrames((f) => f.length >= 1, 'the retry line');
    expect(stream.frames[0]).toEqual({ retry: 3000 });

    const sent = [runEvent('s1'), runEvent('s1', { type: 'node_end', status: 'ok' }), runEvent('s1', { type: 'failed', error: 'boom' })];
    const ids: string[] = [];
    for (const event of sent) ids.push(await publish(event));
    await stream.waitForFrames((f) => eventsOf(f).length === 3, 'three frames');
    expect(eventsOf(stream.frames)).toEqual(sent.map((event, i) => ({ id: ids[i], event })));
  });

  it('delivers only the events of the given session, and of its own tenant', async () => {
    const all = await open();
    const one = await open('?session=s-2');
    await publish(runEvent('s-1'));
    await publish(runEvent('s-2'));
    await publish(runEvent('s-2'), 'AnotherTenant');
    const last = await publish(runEvent('s-3'));
    await all.waitForFrames((f) => eventsOf(f).some((e) => e.id === last), 'the last event on the unfiltered stream');
    expect(eventsOf(all.frames).map((e) => e.event.session)).toEqual(['s-1', 's-2', 's-3']);
    const filtered = eventsOf(one.frames);
    expect(filtered.map((e) => e.event.session)).toEqual(['s-2']);
  });

  it('resumes after Last-Event-ID with the eventsource package: exactly k+1..n, then live events', async () => {
    const first = watch(streamUrl());
    onTestFinished(() => first.close());
    await first.waitForOpen();
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) ids.push(await publish(runEvent('resume')));
    await first.waitForCount(5);
    first.close();
    const k = first.received[2]!.id;
    for (let i = 0; i < 4; i += 1) ids.push(await publish(runEvent('resume')));

    const second = watch(streamUrl(), { lastEventId: k });
    onTestFinished(() => second.close());
    await second.waitForCount(6);
    for (let i = 0; i < 3; i += 1) ids.push(await publish(runEvent('resume')));
    await second.waitForCount(9);
    expect(second.requests[0]).toBe(k);
    expect(second.received.map((e) => e.id)).toEqual(ids.slice(3));
  });

  it('an EventSource dropped by the server reconnects by itself with Last-Event-ID and misses nothing', async () => {
    const watcher = watch(streamUrl());
    onTestFinished(() => watcher.close());
    await watcher.waitForOpen();
    const ids = [await publish(runEvent('drop')), await publish(runEvent('drop'))];
    await watcher.waitForCount(2);
    for (const stream of app.api.deps.streams.streams()) stream.destroy();
    ids.push(await publish(runEvent('drop')), await publish(runEvent('drop')));
    await watcher.waitForOpen(2);
    ids.push(await publish(runEvent('drop')));
    await watcher.waitForCount(5);
    expect(watcher.requests).toEqual([null, ids[1]]);
    expect(watcher.received.map((e) => e.id)).toEqual(ids);
  });

  it('takes last_event_id from the query, lets the header win over it, and rejects malformed ids with 400', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i += 1) ids.push(await publish(runEvent('query')));
    const byQuery = await open(`?session=query&last_event_id=${ids[0]}`);
    await byQuery.waitForFrames((f) => eventsOf(f).length === 3, 'three replayed events');
    expect(eventsOf(byQuery.frames).map((e) => e.id)).toEqual(ids.slice(1));
    const byHeader = await open(`?session=query&last_event_id=${ids[0]}`, { 'Last-Event-ID': ids[2]! });
    await byHeader.waitForFrames((f) => eventsOf(f).length === 1, 'one replayed event');
    expect(eventsOf(byHeader.frames).map((e) => e.id)).toEqual([ids[3]]);

    const badQuery = await call(`${streamUrl()}?last_event_id=yesterday`);
    expect(badQuery.status).toBe(400);
    expect(badQuery.body.error).toMatchObject({ code: 'bad_request', message: expect.stringMatching(/last_event_id/) });
    const badHeader = await call(streamUrl(), { headers: { 'Last-Event-ID': '12-x' } });
    expect(badHeader.status).toBe(400);
    expect(badHeader.body.error).toMatchObject({ code: 'bad_request', message: expect.stringMatching(/Last-Event-ID/) });
  });

  it('counts open streams in agentplane_sse_connections and frees everything when they close', async () => {
    const gauge = async () => {
      const text = (await call(`${app.url}/metrics`)).body as string;
      return Number(/^agentplane_sse_connections (\d+)$/m.exec(text)?.[1]);
    };
    await waitFor('no stream left from earlier tests', () => app.api.deps.streams.size === 0);
    const listeners = listenerCount(app.backend.events);
    const streams = [await open(), await open('?session=x')];
    expect(await gauge()).toBe(2);
    expect(listenerCount(app.backend.events)).toBe(listeners + 2);
    for (const stream of streams) stream.destroy();
    await waitFor('the streams to close', () => app.api.deps.streams.size === 0);
    expect(await gauge()).toBe(0);
    expect(listenerCount(app.backend.events)).toBe(listeners);
  });

  it('is not cut by the server socket timeout while idle', async () => {
    const { server } = app.api;
    // The request timeout bounds receiving a request; a stream's request is received at once.
    expect(server.requestTimeout).toBe(app.config.SERVICE_REQUEST_TIMEOUT_MS);
    const previous = server.timeout;
    server.timeout = 200;
    onTestFinished(() => void (server.timeout = previous));
    const stream = await open();
    let ended = false;
    void stream.ended.then(() => (ended = true));
    // A connection idle from after the stream opened: once the socket timeout cut it, the
    // stream has been idle past that timeout too.
    const idle = connect(Number(new URL(app.url).port), '127.0.0.1');
    onTestFinished(() => void idle.destroy());
    await new Promise((resolve) => idle.once('connect', resolve));
    await new Promise((resolve) => idle.once('close', resolve));
    expect(ended, 'the stream was cut while idle').toBe(false);
    const id = await publish(runEvent('idle'));
    await stream.waitForFrames((f) => eventsOf(f).some((e) => e.id === id), 'the event after the idle period');
  });

  it('ends every stream at shutdown, and any opened afterwards, closing the connection', async () => {
    const stream = await open();
    await stream.waitForFrames((f) => f.length >= 1, 'the retry line');
    app.api.deps.streams.endAll();
    await stream.ended;
    await waitFor('the server to close the connection', () => stream.socket.destroyed);
    const late = await open();
    await late.ended;
    expect(late.frames).toEqual([{ retry: 3000 }]);
  });
});

describe('heartbeat', () => {
  it('writes a keep-alive comment every SERVICE_SSE_HEARTBEAT_MS', async () => {
    const app = await startTestApi({ env: { SERVICE_SSE_HEARTBEAT_MS: '50' } });
    onTestFinished(() => app.close());
    const stream = await openRaw(`${app.url}/api/events/stream`);
    onTestFinished(() => stream.destroy());
    await stream.waitForFrames((f) => f.filter((x) => x.comment === 'keep-alive').length >= 3, 'three keep-alive comments');
  });
});

describe.each(['redis', 'memory'] as const)('tenant isolation with API keys on %s', (mode) => {
  let app: SecuredApi;

  beforeAll(async () => {
    app = await startSecuredApi({
      SERVICE_AUTH: 'apikey',
      SERVICE_API_KEYS: 'key-acme:viewer:acme,key-globex:viewer:globex',
      SERVICE_RBAC: 'true',
      ...(mode === 'redis' ? { REDIS_URL: redis.url } : {}),
    });
  });
  afterAll(async () => {
    await app.close();
  });

  it('a viewer sees only its tenant; no credential is 401', async () => {
    const url = `${app.url}/api/events/stream`;
    expect((await call(url)).status).toBe(401);
    const acme = await openRaw(url, { 'X-Api-Key': 'key-acme' });
    const globex = await openRaw(`${url}?session=g2`, { 'X-Api-Key': 'key-globex' });
    onTestFinished(() => {
      acme.destroy();
      globex.destroy();
    });
    expect([acme.status, globex.status]).toEqual([200, 200]);
    const publish = (tenant: string, session: string) => app.backend.events.publish(tenant, runEvent(session));
    await publish('globex', 'g1');
    await publish('acme', 'a1');
    await publish('globex', 'g2');
    await publish(DEFAULT_TENANT, 'g2');
    const lastAcme = await publish('acme', 'g2');
    const lastGlobex = await publish('globex', 'g2');
    await acme.waitForFrames((f) => eventsOf(f).some((e) => e.id === lastAcme), 'acme events');
    await globex.waitForFrames((f) => eventsOf(f).some((e) => e.id === lastGlobex), 'globex events');
    expect(eventsOf(acme.frames).map((e) => e.event.session)).toEqual(['a1', 'g2']);
    expect(eventsOf(globex.frames).map((e) => e.event.session)).toEqual(['g2', 'g2']);
  });
});

describe('OpenAPI', () => {
  it('documents the stream as text/event-stream with the RunEvent schema and its query parameters', async () => {
    const app = await startTestApi();
    onTestFinished(() => app.close());
    const doc = (await call(`${app.url}/swagger/doc.json`)).body;
    const operation = doc.paths['/api/events/stream'].get;
    expect(operation.parameters.map((p: { name: string }) => p.name)).toEqual(['session', 'last_event_id']);
    expect(operation.responses['200'].content['text/event-stream'].schema).toEqual({ $ref: '#/components/schemas/RunEvent' });
    const schema = doc.components.schemas.RunEvent;
    expect(schema.required).toEqual(['type', 'session', 'run_id', 'agent_id', 'ts']);
    expect(schema.properties.type.enum).toEqual([...RUN_EVENT_TYPES]);
    expect(schema.properties.type.enum).toEqual(expect.arrayContaining(['node_start', 'node_end', 'interrupted', 'approval_decided', 'cancelled', 'custom']));
  });
});
