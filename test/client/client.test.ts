import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { builtInAgents } from '../../src/agents/index.js';
import { ApiError, createClient, type AgentplaneClient, type StreamedEvent } from '../../src/client/index.js';
import { DEFAULT_TENANT, type RunEvent } from '../../src/domain/types.js';
import { defineAgent } from '../../src/runtime/agent.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { useRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { brief } from '../support/events.js';

/** `gated` stops in its `gate` node until the test opens the gate. */
let openGate: () => void = () => {};
let gate = Promise.resolve();
function closeGate(): void {
  gate = new Promise((resolve) => (openGate = resolve));
}
const gated = defineAgent({
  id: 'gated',
  description: 'first, then gate (held until the test opens it).',
  entry: 'first',
  nodes: { first: () => ({ first: true }), gate: async () => ((await gate), { gated: true }) },
  edges: { first: 'gate', gate: '__end__' },
});

/** `asking` asks with a JSON payload and keeps the JSON answer. */
const asking = defineAgent({
  id: 'asking',
  description: 'ask (with a payload), keeping the resume it gets.',
  entry: 'ask',
  nodes: { ask: async (_state, ctx) => ({ resume: (await ctx.interrupt({ prompt: 'Which city?', payload: { choices: ['Paris', 'Lyon'] } })).resume ?? null }) },
  edges: { ask: '__end__' },
});

const session = () => `client-${randomUUID()}`;

const redis = useRedis();

describe.each(['memory', 'redis'] as const)('the typed client on %s', (mode) => {
  let app: TestApi;
  /** URLs the client requested, in order. */
  const requested: string[] = [];
  let client: AgentplaneClient;

  beforeAll(async () => {
    app = await startTestApi({
      ...(mode === 'redis' ? { redisUrl: redis.url } : {}),
      agents: new AgentRegistry([...builtInAgents, gated, asking]),
      env: { SERVICE_SSE_HEARTBEAT_MS: '60000' },
    });
    // On Redis the runs go through BullMQ; this process takes the jobs (no worker process needed here).
    if (mode === 'redis') app.composition.startExecuting();
    client = createClient({
      baseUrl: app.url,
      fetch: (request) => {
        requested.push(`${request.method} ${request.url.slice(app.url.length)}`);
        return fetch(request);
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  /** The retained events of a session, from the first, up to one of type `last`. */
  async function retained(sessionId: string, last: RunEvent['type']): Promise<StreamedEvent[]> {
    const events: StreamedEvent[] = [];
    for await (const streamed of client.events.stream({ session: sessionId, lastEventId: '0-0', signal: AbortSignal.timeout(15_000) })) {
      events.push(streamed);
      if (streamed.event.type === last) break;
    }
    return events;
  }

  it('runs.wait answers interrupted with the approval, approvals.respond with wait_ms the run completed with the comment', async () => {
    const done = await client.runs.wait({ agent_id: 'echo', input: { text: 'hi' } });
    expect(done).toMatchObject({ status: 'completed', agent_id: 'echo', state: { text: 'hi', echoed: true } });

    const paused = await client.runs.wait({ agent_id: 'human-review', input: { topic: 'client' }, wait_ms: 20_000 });
    expect(paused).toMatchObject({ status: 'interrupted', approval: { prompt: 'Publish the draft?', node_id: 'review' } });
    const answer = await client.approvals.respond({ id: paused.approval!.id, approved: true, comment: 'ship it', wait_ms: 20_000 });
    expect(answer).toMatchObject({ id: paused.approval!.id, status: 'approved' });
    expect(answer.run).toMatchObject({ id: paused.id, status: 'completed', state: { outcome: 'published', comment: 'ship it' } });

    const { data } = await client.GET('/api/sessions/state', { params: { query: { session_id: paused.session_id } } });
    expect(data?.state).toMatchObject({ outcome: 'published' });
  });

  it('approvals.respond with a JSON resume: the request shows its payload, the node gets the answer, a too large one is 413', async () => {
    const paused = await client.runs.wait({ agent_id: 'asking', wait_ms: 20_000 });
    expect(paused).toMatchObject({ status: 'interrupted', approval: { prompt: 'Which city?', payload: { choices: ['Paris', 'Lyon'] } } });
    const id = paused.approval!.id;
    const tooLarge = await client.approvals.respond({ id, resume: 'x'.repeat(70_000) }).catch((error: unknown) => error);
    expect(tooLarge).toMatchObject({ status: 413, code: 'payload_too_large' });
    const answer = await client.approvals.respond({ id, resume: { city: 'Lyon' }, wait_ms: 20_000 });
    expect(answer).toMatchObject({ id, status: 'approved', run: { status: 'completed', state: { resume: { city: 'Lyon' } } } });
    const { data } = await client.GET('/api/approvals/{id}', { params: { path: { id } } });
    expect(data).toMatchObject({ status: 'approved', payload: { choices: ['Paris', 'Lyon'] }, resume: { city: 'Lyon' } });
  });

  it('the helpers throw ApiError with the status, code and message of the answer', async () => {
    const unknown = await client.runs.wait({ agent_id: 'no-such-agent' }).catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(ApiError);
    expect(unknown).toMatchObject({ status: 400, code: 'unknown_agent', retryable: false });
    expect((unknown as ApiError).requestId).toBeTruthy();
    const missing = await client.approvals.respond({ id: 'nope', approved: true }).catch((error: unknown) => error);
    expect(missing).toMatchObject({ status: 404, code: 'not_found' });
    const stream = await client.runs.stream({ agent_id: 'no-such-agent' }).catch((error: unknown) => error);
    expect(stream).toMatchObject({ status: 400, code: 'unknown_agent' });
  });

  it('runs.stream yields the run\'s events in order, with the ids of /api/events/stream, and ends at completed', async () => {
    const id = session();
    const stream = await client.runs.stream({ agent_id: 'echo', session_id: id, input: { text: 'streamed' } });
    expect(stream.sessionId).toBe(id);
    const received: StreamedEvent[] = [];
    for await (const streamed of stream) received.push(streamed);
    expect(received.map((e) => brief(e.event))).toEqual(['node_start:receive', 'node_end:receive:ok', 'node_start:respond', 'node_end:respond:ok', 'completed']);
    expect(new Set(received.map((e) => e.event.run_id))).toEqual(new Set([stream.runId]));
    expect(await retained(id, 'completed')).toEqual(received);
  });

  it('runs.stream carries on over /api/events/stream after the last id when its response is cut, without a gap', async () => {
    closeGate();
    onTestFinished(() => openGate());
    const id = session();
    const stream = await client.runs.stream({ agent_id: 'gated', session_id: id }, { retryMs: 20 });
    const received: StreamedEvent[] = [];
    while (received.at(-1)?.event.node !== 'gate') {
      const next = await stream.next();
      if (next.done) throw new Error('the stream ended before the gate');
      received.push(next.value);
    }
    const before = requested.length;
    for (const open of app.api.deps.streams.streams()) open.destroy();
    openGate();
    for await (const streamed of stream) received.push(streamed);

    expect(received.map((e) => brief(e.event))).toEqual(['node_start:first', 'node_end:first:ok', 'node_start:gate', 'node_end:gate:ok', 'completed']);
    expect(requested.slice(before)).toContain(`GET /api/events/stream?session=${id}&last_event_id=${received[2]!.id}`);
    expect(await retained(id, 'completed')).toEqual(received);
  });

  it('events.stream reconnects after a dropped connection and resumes after the last id: nothing missed, nothing twice', async () => {
    const id = session();
    const publish = (type: RunEvent['type'] = 'node_start') =>
      app.backend.events.publish(DEFAULT_TENANT, { type, session: id, run_id: 'r', agent_id: 'a', ts: new Date().toISOString(), node: 'n' });
    const start = await publish();
    const connects: (string | undefined)[] = [];
    const received: string[] = [];
    const controller = new AbortController();
    const consuming = (async () => {
      const events = client.events.stream({ session: id, lastEventId: start, retryMs: 20, signal: controller.signal, onConnect: (after) => connects.push(after) });
      for await (const streamed of events) received.push(streamed.id);
    })();
    onTestFinished(() => controller.abort());

    const ids = [await publish(), await publish()];
    await waitFor('the first two events', () => received.length === 2);
    for (const open of app.api.deps.streams.streams()) open.destroy();
    ids.push(await publish(), await publish());
    await waitFor('a second connection', () => connects.length === 2);
    ids.push(await publish('completed'));
    await waitFor('five events', () => received.length >= 5);
    expect(connects).toEqual([start, ids[1]]);
    expect(received).toEqual(ids);
    controller.abort();
    await consuming;
  });

  it('events.stream throws a 4xx at once, without reconnecting', async () => {
    const before = requested.length;
    const failing = client.events.stream({ lastEventId: 'not-an-id', retryMs: 20 });
    await expect(failing.next()).rejects.toMatchObject({ status: 400, code: 'bad_request' });
    expect(requested.slice(before)).toEqual(['GET /api/events/stream?last_event_id=not-an-id']);
  });
});
