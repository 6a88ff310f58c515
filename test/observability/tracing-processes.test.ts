import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/app.js';
import { FAKE_CHAT_ATTRIBUTES, startFakeOpenAI } from '../support/fake-model.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { startProcess, type AgentProcess } from '../support/processes.js';
import { startPrivateRedis, uniquePrefix, type PrivateRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/*
 * Real processes on a private Redis, exporting to an OTLP/HTTP endpoint of the test's that
 * decodes the wire format: an API (protobuf), a worker (JSON) running the built-in agents and
 * the LangGraph graph of test/fixtures/langgraph-traced (its model on a fake OpenAI-compatible
 * server), and a webhook receiver (protobuf).
 */

const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';
const APPROVER_TRACE = '5b8efff798038103d269b633813fc60c';
const APPROVER_SPAN = 'eee19b7ec3c1b174';
const SENDER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SENDER_SPAN = '00f067aa0ba902b7';
const HOOK_SECRET = 'hook-secret';

const traceparent = (traceId: string, spanId: string) => `00-${traceId}-${spanId}-01`;

/** Waits until the receiver holds a span matching `match` (the processes export every 100 ms). */
function received(receiver: OtlpReceiver, what: string, match: (span: ReceivedSpan) => boolean): Promise<ReceivedSpan> {
  return waitFor(what, () => receiver.spans.find(match));
}

describe('OpenTelemetry traces across an API process and a worker process (Redis)', () => {
  let redis: PrivateRedis;
  let receiver: OtlpReceiver;
  let model: Awaited<ReturnType<typeof startFakeOpenAI>>;
  let api: AgentProcess;
  let worker: AgentProcess;
  let webhooks: AgentProcess;
  let hook: Server;
  let hookUrl: string;
  const deliveries: IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    redis = await startPrivateRedis();
    receiver = await startOtlpReceiver();
    model = await startFakeOpenAI();
    hook = createServer((req, res) => {
      deliveries.push(req.headers);
      req.resume();
      res.end();
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
    const env = {
      REDIS_URL: redis.url,
      SERVICE_KEY_PREFIX: uniquePrefix('otel-processes'),
      SERVICE_SHUTDOWN_DELAY_MS: '0',
      LOG_LEVEL: 'warn',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      SERVICE_LANGGRAPH_JSON: 'test/fixtures/langgraph-traced/langgraph.json',
    };
    // The API and the receiver export protobuf, the worker JSON: the receiver decodes both.
    // Three processes compile their sources at once: a bound, not a timing.
    [api, worker, webhooks] = await Promise.all([
      startProcess({ entry: 'src/main/api.ts', env: { ...env, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }, readyTimeoutMs: 150_000 }),
      startProcess({
        entry: 'src/main/worker.ts',
        portVariable: 'WORKER_PORT',
        env: { ...env, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', SERVICE_WEBHOOK_ALLOW_PRIVATE: 'true', TRACED_MODEL_URL: model.baseURL },
        readyTimeoutMs: 150_000,
      }),
      startProcess({
        entry: 'src/main/webhooks.ts',
        portVariable: 'WEBHOOK_PORT',
        env: { ...env, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', WEBHOOK_HOST: '127.0.0.1', WEBHOOK_SECRET: HOOK_SECRET, WEBHOOK_ROUTES: 'deploy=echo' },
        readyTimeoutMs: 150_000,
      }),
    ]);
  }, 200_000);
  afterAll(async () => {
    const codes = await Promise.all([webhooks, worker, api].map((p) => p?.stop()));
    await new Promise<void>((resolve) => hook?.close(() => resolve()));
    await model?.close();
    await receiver?.close();
    await redis?.stop();
    expect(codes).toEqual([0, 0, 0]);
  });

  it("a run started with the caller's traceparent is one tree: the API's server span, the worker's run and node spans", async () => {
    const waited = await call(`${api.url}/api/runs/wait`, {
      method: 'POST',
      json: { agent_id: 'echo', input: { hello: 'processes' }, wait_ms: 20_000 },
      headers: { traceparent: traceparent(CALLER_TRACE, CALLER_SPAN) },
    });
    expect(waited.status, JSON.stringify(waited.body)).toBe(200);
    const runId = waited.body.id as string;
    const server = await received(receiver, 'the server span', (span) => span.name === 'POST /api/runs/wait' && span.traceId === CALLER_TRACE);
    expect(server).toMatchObject({ parentSpanId: CALLER_SPAN, kind: 2 });
    const run = await received(receiver, 'the run span', (span) => span.name === 'run echo' && span.attributes['agentplane.run.id'] === runId);
    expect(run).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: server.spanId, kind: 5 });
    for (const node of ['receive', 'respond']) {
      const span = await received(receiver, `the ${node} node`, (s) => s.name === `node ${node}` && s.attributes['agentplane.run.id'] === runId);
      expect(span).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: run.spanId });
    }
    expect(server.resource['agentplane.role']).toBe('api');
    expect(run.resource['agentplane.role']).toBe('worker');
    expect(server.resource['service.instance.id']).toEqual(expect.any(String));
    expect(run.resource['service.instance.id']).not.toBe(server.resource['service.instance.id']);
    expect(new Set(receiver.contentTypes)).toEqual(new Set(['application/x-protobuf', 'application/json']));
  });

  it("the webhook a worker delivers carries the run's traceparent, its POST a client span of the run's trace", async () => {
    const started = await call(`${api.url}/runs`, {
      method: 'POST',
      json: { assistant_id: 'echo', input: {}, webhook: hookUrl },
      headers: { traceparent: traceparent(CALLER_TRACE, CALLER_SPAN) },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const runId = started.body.run_id as string;
    const delivery = await waitFor('the webhook delivery', () => deliveries.find((headers) => headers['webhook-id'] === `msg_${runId}`));
    const post = await received(receiver, 'the webhook client span', (span) => span.kind === 3 && span.attributes['url.full'] === hookUrl && span.traceId === CALLER_TRACE);
    expect(post.resource['agentplane.role']).toBe('worker');
    expect(delivery.traceparent).toBe(traceparent(CALLER_TRACE, post.spanId));
    const run = await received(receiver, 'the run span', (span) => span.name === 'run echo' && span.attributes['agentplane.run.id'] === runId);
    expect(post.parentSpanId).toBe(run.spanId);
  });

  it("an approval's resume is linked to the approver's request and to the run's trace; the decision is an event of the approver's span", async () => {
    const waited = await call(`${api.url}/api/runs/wait`, {
      method: 'POST',
      json: { agent_id: 'human-review', input: { topic: 'tracing' }, wait_ms: 20_000 },
      headers: { traceparent: traceparent(CALLER_TRACE, CALLER_SPAN) },
    });
    expect(waited.body).toMatchObject({ status: 'interrupted' });
    const { id: runId, approval_id: approvalId } = waited.body as { id: string; approval_id: string };
    const first = await received(receiver, 'the first attempt', (span) => span.name === 'run human-review' && span.attributes['agentplane.run.id'] === runId);
    expect(first.traceId).toBe(CALLER_TRACE);
    expect(first.events.map((event) => event.name)).toContain('agentplane.interrupted');

    const answer = await call(`${api.url}/api/approval/respond`, {
      method: 'POST',
      json: { id: approvalId, approved: true, comment: 'traced', wait_ms: 20_000 },
      headers: { traceparent: traceparent(APPROVER_TRACE, APPROVER_SPAN) },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toMatchObject({ run: { status: 'completed' } });
    const approver = await received(receiver, "the approver's server span", (span) => span.name === 'POST /api/approval/respond' && span.traceId === APPROVER_TRACE);
    expect(approver.events).toContainEqual({
      name: 'agentplane.approval.decided',
      attributes: { 'agentplane.approval.id': approvalId, 'agentplane.run.id': runId, 'agentplane.approval.status': 'approved' },
    });
    const resumed = await received(
      receiver,
      'the resumed attempt',
      (span) => span.name === 'run human-review' && span.attributes['agentplane.run.id'] === runId && span.spanId !== first.spanId,
    );
    expect(resumed).toMatchObject({ parentSpanId: '', kind: 5 });
    expect(resumed.traceId).not.toBe(CALLER_TRACE);
    expect(resumed.links).toEqual(
      expect.arrayContaining([
        { traceId: APPROVER_TRACE, spanId: approver.spanId, attributes: { 'agentplane.link': 'approval', 'agentplane.approval.id': approvalId } },
        expect.objectContaining({ traceId: CALLER_TRACE, attributes: { 'agentplane.link': 'run' } }),
      ]),
    );
    expect(resumed.attributes['agentplane.run.status']).toBe('completed');
  });

  it("a LangGraph graph's run started with the caller's traceparent: the worker's task spans and the model call with its token usage, in the caller's trace", async () => {
    const waited = await call(`${api.url}/api/runs/wait`, {
      method: 'POST',
      json: { agent_id: 'lg-traced', input: { question: ' what? ' }, wait_ms: 20_000 },
      headers: { traceparent: traceparent(CALLER_TRACE, CALLER_SPAN) },
    });
    expect(waited.status, JSON.stringify(waited.body)).toBe(200);
    expect(waited.body, JSON.stringify(waited.body)).toMatchObject({ status: 'completed' });
    const runId = waited.body.id as string;
    const run = await received(receiver, 'the run span', (span) => span.name === 'run lg-traced' && span.attributes['agentplane.run.id'] === runId);
    expect(run).toMatchObject({ traceId: CALLER_TRACE, kind: 5 });
    expect(run.attributes).toMatchObject({ 'agentplane.agent.id': 'lg-traced', 'agentplane.run.status': 'completed' });
    expect(run.resource['agentplane.role']).toBe('worker');
    const server = await received(receiver, "the run's parent", (span) => span.spanId === run.parentSpanId);
    expect(server).toMatchObject({ name: 'POST /api/runs/wait', traceId: CALLER_TRACE, parentSpanId: CALLER_SPAN, kind: 2 });
    expect(server.resource['agentplane.role']).toBe('api');
    const tasks: Record<string, ReceivedSpan> = {};
    for (const task of ['prepare', 'ask', 'finish']) {
      const span = await received(receiver, `the ${task} task`, (s) => s.name === `task ${task}` && s.attributes['agentplane.run.id'] === runId);
      expect(span, task).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: run.spanId, kind: 1 });
      expect(span.attributes['agentplane.node.id']).toBe(task);
      expect(span.resource['agentplane.role']).toBe('worker');
      tasks[task] = span;
    }
    const chat = await received(receiver, 'the model call', (span) => span.name === 'chat gpt-test' && span.parentSpanId === tasks.ask!.spanId);
    expect(chat).toMatchObject({ traceId: CALLER_TRACE, kind: 3 });
    // As the fake server answered: its model's name and its usage (11 prompt tokens, 3 completion tokens).
    expect(chat.attributes).toMatchObject(FAKE_CHAT_ATTRIBUTES);
    expect(chat.resource['agentplane.role']).toBe('worker');
    expect(chat.resource['service.instance.id']).toBe(run.resource['service.instance.id']);
    expect(chat.resource['service.instance.id']).not.toBe(server.resource['service.instance.id']);
    // One span of each in the caller's trace.
    const names = receiver.spans.filter((span) => span.traceId === CALLER_TRACE && span.attributes['agentplane.run.id'] === runId).map((span) => span.name);
    expect(names.sort()).toEqual(['run lg-traced', 'task ask', 'task finish', 'task prepare']);
    expect(receiver.spans.filter((span) => span.name === 'chat gpt-test' && span.traceId === CALLER_TRACE)).toHaveLength(1);
    // The stored spans (GET /api/traces) are the same run and tasks, with the ids they were exported under.
    const stored = await call(`${api.url}/api/traces?session_id=${waited.body.session_id as string}`);
    expect(stored.status).toBe(200);
    const storedSpans = (stored.body.traces as { name: string; trace_id?: string; trace_span_id?: string }[]).map(({ name, trace_id, trace_span_id }) => ({ name, trace_id, trace_span_id }));
    expect(storedSpans.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      ...['ask', 'finish', 'prepare'].map((task) => ({ name: task, trace_id: CALLER_TRACE, trace_span_id: tasks[task]!.spanId })),
      { name: 'run lg-traced', trace_id: CALLER_TRACE, trace_span_id: run.spanId },
    ]);
  });

  it("the webhook receiver process continues the sender's traceparent (its resource's role: webhooks); the worker's run sits under the delivery", async () => {
    const delivery = await call(`${webhooks.url}/webhook`, {
      method: 'POST',
      headers: { 'X-Webhook-Secret': HOOK_SECRET, 'X-Event-Type': 'deploy', traceparent: traceparent(SENDER_TRACE, SENDER_SPAN) },
      json: { version: 'traced' },
    });
    expect(delivery).toMatchObject({ status: 200, body: { status: 'ok', handled: 1 } });
    const request = await received(receiver, "the receiver's server span", (span) => span.traceId === SENDER_TRACE && span.parentSpanId === SENDER_SPAN);
    expect(request).toMatchObject({ name: 'POST /webhook', kind: 2 });
    expect(request.resource['agentplane.role']).toBe('webhooks');
    const span = await received(receiver, 'the delivery span', (s) => s.name === 'webhook deploy' && s.parentSpanId === request.spanId);
    expect(span).toMatchObject({ traceId: SENDER_TRACE });
    expect(span.resource['agentplane.role']).toBe('webhooks');
    const run = await received(receiver, 'the run it started', (s) => s.name === 'run echo' && s.parentSpanId === span.spanId);
    expect(run.traceId).toBe(SENDER_TRACE);
    expect(run.resource['agentplane.role']).toBe('worker');
    expect(request.resource['service.instance.id']).toEqual(expect.any(String));
    expect(run.resource['service.instance.id']).not.toBe(request.resource['service.instance.id']);
  });
});
