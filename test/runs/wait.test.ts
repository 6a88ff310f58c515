import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import agents from '../fixtures/agents.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { listenerCount } from '../support/listeners.js';
import { onBothBackends } from './backends.js';
import { eventsOf } from '../support/sse.js';
import { cancelActiveOnFinish, cancelRun, openRunStream, postWait, runWaitScenarios, sessionRun, within } from './wait.js';

onBothBackends(runWaitScenarios);

describe('held requests on an API with tight limits (SERVICE_WAIT_MAX_PER_PRINCIPAL 2, SERVICE_SSE_MAX_PER_PRINCIPAL 1, SERVICE_REQUEST_TIMEOUT_MS 1000)', () => {
  let app: TestApi;
  beforeAll(async () => {
    app = await startTestApi({
      agents: new AgentRegistry(agents),
      env: { SERVICE_WAIT_MAX_PER_PRINCIPAL: '2', SERVICE_SSE_MAX_PER_PRINCIPAL: '1', SERVICE_REQUEST_TIMEOUT_MS: '1000' },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('waits and streams have caps of their own: a third held wait is 429 while a stream is admitted, a second stream is 429 while waits are', async () => {
    const listeners = listenerCount(app.backend.events);
    const sessions = [`s-${randomUUID()}`, `s-${randomUUID()}`, `s-${randomUUID()}`];
    for (const session of sessions) cancelActiveOnFinish(app.url, session);
    const held = sessions.slice(0, 2).map((session_id) => postWait(app.url, { agent_id: 'waiter', session_id, input: {}, wait_ms: 25_000 }));
    const runs = await Promise.all(sessions.slice(0, 2).map((s) => sessionRun(app.url, s, 'running')));

    const third = await postWait(app.url, { agent_id: 'echo', wait_ms: 1_000 });
    expect(third.status).toBe(429);
    expect(third.body.error.code).toBe('rate_limited');
    expect(third.body.error.message).toContain('SERVICE_WAIT_MAX_PER_PRINCIPAL');
    expect(third.headers.get('retry-after')).toBe('5');
    const session = `s-${randomUUID()}`;
    const refused = await call(`${app.url}/api/runs/wait`, { method: 'POST', json: { agent_id: 'echo', session_id: session } });
    expect(refused.status).toBe(429);
    // Refused before anything started: no run on that session.
    expect((await call(`${app.url}/api/runs?session_id=${session}`)).status).toBe(404);

    // Streams are counted apart: the first is admitted, the next one of either kind is not.
    const stream = await openRunStream(app.url, { agent_id: 'waiter', session_id: sessions[2], input: {} });
    onTestFinished(() => stream.destroy());
    expect(stream.status).toBe(200);
    const events = await call(`${app.url}/api/events/stream`);
    expect(events.status).toBe(429);
    expect(events.body.error.message).toContain('SERVICE_SSE_MAX_PER_PRINCIPAL');
    const second = await openRunStream(app.url, { agent_id: 'echo' });
    await second.ended;
    expect(second.status).toBe(429);

    expect((await cancelRun(app.url, runs[0]!.id)).status).toBe(200);
    expect((await held[0]!).body.status).toBe('cancelled');
    const admitted = await postWait(app.url, { agent_id: 'echo', wait_ms: 10_000 });
    expect(admitted.status).toBe(200);
    expect(admitted.body.status).toBe('completed');

    expect((await cancelRun(app.url, runs[1]!.id)).status).toBe(200);
    expect((await held[1]!).body.status).toBe('cancelled');
    expect((await cancelRun(app.url, (await sessionRun(app.url, sessions[2]!, 'running')).id)).status).toBe(200);
    await within('the stream to end at cancelled', stream.ended);
    expect(listenerCount(app.backend.events)).toBe(listeners);
  });

  it('a wait and a run stream held past SERVICE_REQUEST_TIMEOUT_MS are not cut', async () => {
    const session = `s-${randomUUID()}`;
    const other = `s-${randomUUID()}`;
    cancelActiveOnFinish(app.url, session);
    cancelActiveOnFinish(app.url, other);
    const stream = await openRunStream(app.url, { agent_id: 'waiter', session_id: session, input: {} });
    onTestFinished(() => stream.destroy());
    expect(stream.status).toBe(200);
    const t0 = Date.now();
    const waited = await postWait(app.url, { agent_id: 'waiter', session_id: other, input: {}, wait_ms: 2_500 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2_490);
    expect(waited.status, JSON.stringify(waited.body)).toBe(202);
    expect(waited.body.status).toBe('running');
    expect(stream.finished()).toBe(false);
    const run = await sessionRun(app.url, session, 'running');
    expect(stream.headers['x-run-id']).toBe(run.id);
    // Cancelled: the stream's last event, then its end.
    await cancelRun(app.url, run.id);
    await within('the stream to end at cancelled', stream.ended);
    expect(stream.finished()).toBe(true);
    expect(eventsOf(stream.frames).map((e) => e.event.type)).toEqual(['node_start', 'cancelled']);
    expect((await cancelRun(app.url, waited.body.id)).status).toBe(200);
  });
});

describe('OpenAPI document of the waits and the run stream', () => {
  let app: TestApi;
  beforeAll(async () => {
    app = await startTestApi();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('documents POST /api/runs/wait, POST /api/runs/stream (text/event-stream) and wait_ms on respond', async () => {
    const response = await call(`${app.url}/swagger/doc.json`);
    expect(response.status).toBe(200);
    const doc = response.body;

    const wait = doc.paths['/api/runs/wait']?.post;
    expect(wait).toBeDefined();
    const waitBody = wait.requestBody.content['application/json'].schema;
    expect(waitBody.required).toEqual(['agent_id']);
    expect(waitBody.properties.wait_ms).toMatchObject({ type: 'integer', minimum: 1, maximum: 300_000 });
    expect(Object.keys(waitBody.properties)).toEqual(expect.arrayContaining(['agent_id', 'input', 'session_id', 'multitask', 'timeout_ms']));
    expect(wait.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/WaitedRun' });
    expect(wait.responses['202'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Run' });
    expect(Object.keys(wait.responses)).toEqual(expect.arrayContaining(['400', '409', '429']));
    const waited = doc.components.schemas.WaitedRun;
    expect(Object.keys(waited.properties)).toEqual(expect.arrayContaining(['id', 'session_id', 'status', 'state', 'approval']));
    expect(waited.properties.approval.required).toEqual(['id', 'prompt', 'node_id', 'requested_at']);

    const stream = doc.paths['/api/runs/stream']?.post;
    expect(stream).toBeDefined();
    expect(stream.requestBody.content['application/json'].schema.properties.agent_id).toBeDefined();
    expect(stream.requestBody.content['application/json'].schema.properties.wait_ms).toBeUndefined();
    expect(Object.keys(stream.responses['200'].content)).toEqual(['text/event-stream']);
    expect(stream.responses['200'].content['text/event-stream'].schema).toEqual({ $ref: '#/components/schemas/RunEvent' });
    expect(Object.keys(stream.responses['200'].headers)).toEqual(expect.arrayContaining(['X-Run-Id', 'X-Session-Id']));

    const respond = doc.paths['/api/approval/respond']?.post;
    const respondBody = respond.requestBody.content['application/json'].schema;
    expect(respondBody.properties.wait_ms).toMatchObject({ type: 'integer', minimum: 1, maximum: 300_000 });
    // `approved` may be left out when `resume` is given (then the answer approves).
    expect(respondBody.required).toEqual(['id']);
    const answered = respond.responses['200'].content['application/json'].schema;
    expect(answered.properties.run).toEqual({ $ref: '#/components/schemas/WaitedRun' });
  });
});
